package io.relay.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HTTPGetAction;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscaler;
import io.fabric8.kubernetes.api.model.gatewayapi.v1.HTTPRoute;
import io.fabric8.kubernetes.api.model.networking.v1.Ingress;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyIngressRule;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPeer;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.relay.config.SettingsReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The Kubernetes manifests parse as the objects they claim to be, and agree with the node: its
 * ports, health paths, discovery selector and permissions, drain budget and the ingress hash key.
 */
class KubernetesManifestsTest {
  /** The node drains within this long after SIGTERM (docs/cluster.md, "Drain"). */
  private static final int DRAIN_BUDGET_SECONDS = 30;
  private static final Path BASE = Manifests.kubernetes().resolve("base");
  private static final Path OVERLAYS = Manifests.kubernetes().resolve("overlays");
  /** The node's own configuration: defaults from application.conf and the reference.conf files. */
  private static final Config NODE =
      ConfigFactory.parseResources("application.conf").withFallback(ConfigFactory.defaultReference()).resolve();

  private final List<HasMetadata> base = Manifests.objectsIn(BASE);
  private final Deployment deployment = Manifests.one(base, Deployment.class, "relay");
  private final Container container = deployment.getSpec().getTemplate().getSpec().getContainers().get(0);

  @Test
  void everyManifestParsesAsATypedKubernetesObject() {
    Map<String, Class<?>> expected =
        Map.ofEntries(
            Map.entry("Deployment", Deployment.class),
            Map.entry("Service", Service.class),
            Map.entry("ServiceAccount", ServiceAccount.class),
            Map.entry("Role", Role.class),
            Map.entry("RoleBinding", RoleBinding.class),
            Map.entry("PodDisruptionBudget", PodDisruptionBudget.class),
            Map.entry("HorizontalPodAutoscaler", HorizontalPodAutoscaler.class),
            Map.entry("NetworkPolicy", NetworkPolicy.class),
            Map.entry("Ingress", Ingress.class),
            Map.entry("HTTPRoute", HTTPRoute.class),
            // CRDs (Kong's, cert-manager's): no typed model, read generically
            Map.entry("KongUpstreamPolicy", GenericKubernetesResource.class),
            Map.entry("Certificate", GenericKubernetesResource.class),
            Map.entry("Issuer", GenericKubernetesResource.class));
    List<Path> files = Manifests.manifestFiles(Manifests.kubernetes());
    assertTrue(files.size() >= 12, "manifests found: " + files);
    for (Path file : files) {
      for (HasMetadata object : Manifests.objects(file)) {
        Class<?> type = expected.get(object.getKind());
        assertTrue(type != null, file + ": unexpected kind " + object.getKind());
        assertTrue(type.isInstance(object), file + ": " + object.getKind() + " parsed as " + object.getClass().getName());
        assertFalse(object.getMetadata().getName() == null || object.getMetadata().getName().isBlank(), file + ": unnamed " + object.getKind());
      }
    }
  }

  /**
   * The manifests are this checkout's: they set what its nodes read (the cluster links' TLS
   * directory, for one), so the image they name, and the one the recipe and the README build, is
   * its version, not an earlier release's.
   */
  @Test
  void theImageTheManifestsNameIsThisCheckoutsVersion() throws IOException {
    String version = System.getProperty("relay.version");
    assertFalse(version == null || version.isBlank(), "the build passes relay.version");
    JsonNode images = Manifests.yaml(BASE.resolve("kustomization.yaml")).path("images");
    assertEquals(List.of("relay " + version), List.of(images.path(0).path("name").asText() + " " + images.path(0).path("newTag").asText()), "images: " + images);
    for (Path file : List.of(Manifests.deployDir().resolve("container/Containerfile"), Manifests.deployDir().resolve("README.md"), BASE.resolve("kustomization.yaml"))) {
      List<String> tags = Pattern.compile("relay:([0-9][^\\s`)]*)").matcher(Files.readString(file)).results().map(m -> m.group(1)).toList();
      assertFalse(tags.isEmpty(), file + " names the image");
      assertEquals(Set.of(version), Set.copyOf(tags), file + " names the image of this version");
    }
  }

  @Test
  void everyKustomizationReferencesFilesThatExistAndTheBaseListsAllOfItsFiles() {
    for (Path dir : kustomizationDirs()) {
      JsonNode kustomization = Manifests.yaml(dir.resolve("kustomization.yaml"));
      assertEquals("Kustomization", kustomization.path("kind").asText(), dir + " kustomization kind");
      for (JsonNode resource : kustomization.path("resources")) {
        Path target = dir.resolve(resource.asText()).normalize();
        assertTrue(Files.isRegularFile(target) || Files.isRegularFile(target.resolve("kustomization.yaml")), dir + ": resource " + resource.asText() + " does not exist");
      }
      for (JsonNode patch : kustomization.path("patches")) {
        if (patch.has("path")) {
          assertTrue(Files.isRegularFile(dir.resolve(patch.get("path").asText())), dir + ": patch " + patch + " does not exist");
        }
        String kind = patch.path("target").path("kind").asText();
        String name = patch.path("target").path("name").asText();
        assertTrue(base.stream().anyMatch(o -> o.getKind().equals(kind) && o.getMetadata().getName().equals(name)), dir + ": patch target " + kind + "/" + name + " is not in the base");
      }
      for (JsonNode generator : kustomization.path("configMapGenerator")) {
        if (generator.path("behavior").asText().equals("merge")) {
          assertEquals("relay-config", generator.path("name").asText(), dir + " merges into the base's config map");
        }
      }
    }
    Set<String> listed = new HashSet<>();
    Manifests.yaml(BASE.resolve("kustomization.yaml")).path("resources").forEach(r -> listed.add(r.asText()));
    Set<String> files = Manifests.manifestFiles(BASE).stream().map(p -> p.getFileName().toString()).collect(Collectors.toSet());
    assertEquals(files, listed, "the base kustomization lists exactly the base's manifest files");
  }

  @Test
  void containerPortsAreTheNodesDefaultsAndTheEnvironmentSetsThem() {
    Map<String, Integer> ports = container.getPorts().stream().collect(Collectors.toMap(ContainerPort::getName, ContainerPort::getContainerPort));
    assertEquals(
        Map.of(
            "access", NODE.getInt("relay.port-access"),
            "relay", NODE.getInt("relay.port-relay"),
            "management", NODE.getInt("relay.port-management"),
            "remoting", NODE.getInt("relay.port-remote")),
        ports);
    Map<String, String> env = env();
    assertEquals(String.valueOf(ports.get("access")), env.get("RELAY_PORT_ACCESS"));
    assertEquals(String.valueOf(ports.get("relay")), env.get("RELAY_PORT_RELAY"));
    assertEquals(String.valueOf(ports.get("management")), env.get("RELAY_PORT_MANAGEMENT"));
    assertEquals(String.valueOf(ports.get("remoting")), env.get("RELAY_PORT_REMOTE"));
  }

  @Test
  void everyRelayVariableTheDeploymentSetsIsASettingOfTheNode() {
    Set<String> known = NODE.getConfig("relay").entrySet().stream().map(e -> SettingsReader.envVar("relay." + e.getKey())).collect(Collectors.toSet());
    for (EnvVar var : container.getEnv()) {
      if (var.getName().startsWith("RELAY_")) {
        assertTrue(known.contains(var.getName()), var.getName() + " is not a setting of the node");
      }
    }
    EnvVar host = envVar("RELAY_HOST");
    assertEquals("status.podIP", host.getValueFrom().getFieldRef().getFieldPath(), "Artery binds the pod IP");
    assertTrue(
        container.getEnv().stream().noneMatch(e -> e.getName().equals("RELAY_SECRET")),
        "the secret is never a literal or an environment variable: it is read from its mounted file");
    String secretFile = env().get("RELAY_SECRET_FILE");
    VolumeMount mount =
        container.getVolumeMounts().stream()
            .filter(m -> secretFile.startsWith(m.getMountPath() + "/"))
            .findFirst()
            .orElseThrow(() -> new AssertionError("RELAY_SECRET_FILE " + secretFile + " lies in no volume mount"));
    Volume volume =
        deployment.getSpec().getTemplate().getSpec().getVolumes().stream().filter(v -> v.getName().equals(mount.getName())).findFirst().orElseThrow();
    assertEquals("relay-secret", volume.getSecret().getSecretName(), "the secret file is the Secret relay-secret, mounted");
    assertEquals("secret", secretFile.substring(mount.getMountPath().length() + 1), "the file of the Secret's key");
    assertEquals("kubernetes-api", env().get("RELAY_DISCOVERY"));
    EnvVar appVersion = envVar("RELAY_APP_VERSION");
    String annotation = appVersion.getValueFrom().getFieldRef().getFieldPath().replaceAll("metadata\\.annotations\\['(.*)'\\]", "$1");
    assertTrue(deployment.getSpec().getTemplate().getMetadata().getAnnotations().get(annotation).matches("\\d+"), "the pod template carries the app version annotation " + annotation);
  }

  @Test
  void theHeapFollowsTheContainersMemoryLimitInTheImageAsInTheDeployment() throws IOException {
    String javaOptions = env().get("JAVA_TOOL_OPTIONS");
    assertTrue(javaOptions.contains("-XX:MaxRAMPercentage="), "the heap follows the container's memory limit: " + javaOptions);
    assertFalse(javaOptions.contains("-Xmx"), "a fixed -Xmx would ignore the memory limit");
    String heapShare = javaOptions.replaceAll("(?s).*(-XX:MaxRAMPercentage=\\d+).*", "$1");
    assertTrue(Files.readString(Manifests.deployDir().resolve("container/Containerfile")).contains(heapShare),
        "the image alone sizes the heap as the Deployment does (" + heapShare + "), leaving room for the frames outside it");
    assertTrue(container.getResources().getLimits().containsKey("memory") && container.getResources().getRequests().containsKey("cpu"));
  }

  @Test
  void theClusterLinksUseTheCertManagerCertificatesSecretMountedIntoThePods() {
    assertFalse(env().containsKey("RELAY_CLUSTER_TRANSPORT"), "the cluster links are never chosen to be plain TCP");
    String dir = env().get("RELAY_CLUSTER_TLS_DIR");
    assertTrue(dir != null, "the Deployment sets RELAY_CLUSTER_TLS_DIR");
    VolumeMount mount =
        container.getVolumeMounts().stream()
            .filter(m -> m.getMountPath().equals(dir))
            .findFirst()
            .orElseThrow(() -> new AssertionError("RELAY_CLUSTER_TLS_DIR " + dir + " is no volume mount"));
    assertTrue(Boolean.TRUE.equals(mount.getReadOnly()), "the cluster TLS files are mounted read-only");
    Volume volume =
        deployment.getSpec().getTemplate().getSpec().getVolumes().stream().filter(v -> v.getName().equals(mount.getName())).findFirst().orElseThrow();
    assertTrue(volume.getSecret() != null && (volume.getSecret().getItems() == null || volume.getSecret().getItems().isEmpty()), "the whole Secret is mounted: tls.crt, tls.key and ca.crt");

    JsonNode certificate = certManager("Certificate", "relay-cluster-tls");
    JsonNode spec = certificate.path("spec");
    assertEquals(volume.getSecret().getSecretName(), spec.path("secretName").asText(), "the pods mount the node Certificate's Secret");
    assertFalse(spec.path("isCA").asBoolean(), "the node certificate is no CA");
    assertEquals("RSA", spec.path("privateKey").path("algorithm").asText(), "Pekko's provider reads RSA keys only");
    assertEquals("PKCS8", spec.path("privateKey").path("encoding").asText(), "an unencrypted PKCS#8 key, which the provider reads");
    Set<String> usages = new HashSet<>();
    spec.path("usages").forEach(u -> usages.add(u.asText()));
    assertTrue(usages.containsAll(Set.of("server auth", "client auth")), "each node is TLS server and client of its links: " + usages);
    assertFalse(spec.path("commonName").asText().isEmpty(), "the nodes' shared name, which the provider compares with its peers'");
    assertFalse(spec.path("renewBefore").asText().isEmpty(), "cert-manager renews the certificate before it expires");

    JsonNode issuer = certManager("Issuer", spec.path("issuerRef").path("name").asText());
    String caSecret = issuer.path("spec").path("ca").path("secretName").asText();
    assertFalse(caSecret.isEmpty(), "the node certificate is issued directly by a CA issuer (the provider accepts no intermediate)");
    JsonNode ca =
        base.stream()
            .filter(o -> o.getKind().equals("Certificate"))
            .map(o -> Manifests.YAML.<JsonNode>valueToTree(o))
            .filter(c -> c.path("spec").path("secretName").asText().equals(caSecret))
            .findFirst()
            .orElseThrow(() -> new AssertionError("no Certificate makes the CA issuer's Secret " + caSecret));
    assertTrue(ca.path("spec").path("isCA").asBoolean(), "the CA issuer's Secret is a CA certificate");
    certManager("Issuer", ca.path("spec").path("issuerRef").path("name").asText());
  }

  /** A cert-manager object of the base, as JSON. */
  private JsonNode certManager(String kind, String name) {
    HasMetadata object =
        base.stream()
            .filter(o -> o.getKind().equals(kind) && o.getMetadata().getName().equals(name))
            .findFirst()
            .orElseThrow(() -> new AssertionError("the base has no " + kind + " named " + name));
    assertTrue(object.getApiVersion().startsWith("cert-manager.io/"), kind + "/" + name + " is cert-manager's: " + object.getApiVersion());
    return Manifests.YAML.<JsonNode>valueToTree(object);
  }

  @Test
  void probesUseTheManagementPortsHealthPaths() {
    assertProbe(container.getReadinessProbe().getHttpGet(), "/ready");
    assertProbe(container.getLivenessProbe().getHttpGet(), "/alive");
    assertProbe(container.getStartupProbe().getHttpGet(), "/alive");
  }

  private void assertProbe(HTTPGetAction probe, String path) {
    assertEquals(path, probe.getPath());
    String port = probe.getPort().getStrVal() != null ? probe.getPort().getStrVal() : String.valueOf(probe.getPort().getIntVal());
    int number = container.getPorts().stream().filter(p -> p.getName().equals(port) || String.valueOf(p.getContainerPort()).equals(port)).findFirst().orElseThrow().getContainerPort();
    assertEquals(NODE.getInt("relay.port-management"), number, path + " is probed on the management port");
  }

  @Test
  void theDiscoverySelectorMatchesThePodTemplateAndTheRoleGrantsWhatDiscoveryNeeds() {
    Map<String, String> env = env();
    String serviceName = env.getOrDefault("RELAY_DISCOVERY_SERVICE_NAME", NODE.getString("relay.discovery-service-name"));
    String selector = env.getOrDefault("RELAY_DISCOVERY_LABEL_SELECTOR", NODE.getString("relay.discovery-label-selector")).replace("%s", serviceName);
    Map<String, String> labels = deployment.getSpec().getTemplate().getMetadata().getLabels();
    for (String term : selector.split(",")) {
      String[] kv = term.split("=", 2);
      assertEquals(kv[1], labels.get(kv[0]), "pod template label for selector term " + term);
    }
    assertTrue(Integer.parseInt(env.get("RELAY_DISCOVERY_REQUIRED_CONTACT_POINTS")) <= Manifests.one(base, HorizontalPodAutoscaler.class, "relay").getSpec().getMinReplicas(),
        "a new cluster forms with the autoscaler's minimum of pods");

    Role role = Manifests.one(base, Role.class, "relay-pod-reader");
    PolicyRule rule = role.getRules().get(0);
    assertEquals(1, role.getRules().size(), "one rule: least privilege");
    assertEquals(List.of(""), rule.getApiGroups());
    assertEquals(List.of("pods"), rule.getResources());
    assertEquals(Set.of("get", "watch", "list"), Set.copyOf(rule.getVerbs()));
    RoleBinding binding = Manifests.one(base, RoleBinding.class, "relay-pod-reader");
    assertEquals("relay-pod-reader", binding.getRoleRef().getName());
    assertEquals(deployment.getSpec().getTemplate().getSpec().getServiceAccountName(), binding.getSubjects().get(0).getName());
  }

  @Test
  void aDrainingNodeIsNeverKilledBeforeItsDrainBudget() {
    long grace = deployment.getSpec().getTemplate().getSpec().getTerminationGracePeriodSeconds();
    assertTrue(grace >= DRAIN_BUDGET_SECONDS, "terminationGracePeriodSeconds " + grace + " covers the " + DRAIN_BUDGET_SECONDS + " s drain");
    long readinessLag = container.getReadinessProbe().getPeriodSeconds() * (long) container.getReadinessProbe().getFailureThreshold();
    assertTrue(readinessLag < NODE.getDuration("relay.drain-delay").toSeconds(), "the probe notices unreadiness within the drain delay");
    assertEquals(0, deployment.getSpec().getStrategy().getRollingUpdate().getMaxUnavailable().getIntVal(), "rollouts replace one node at a time");
    assertEquals(1, Manifests.one(base, PodDisruptionBudget.class, "relay").getSpec().getMaxUnavailable().getIntVal());
    HorizontalPodAutoscaler hpa = Manifests.one(base, HorizontalPodAutoscaler.class, "relay");
    assertTrue(hpa.getSpec().getBehavior().getScaleDown().getStabilizationWindowSeconds() >= 300, "scale-down waits out load dips");
  }

  @Test
  void managementAndRemotingStayInsideTheCluster() {
    NetworkPolicy policy = Manifests.one(base, NetworkPolicy.class, "relay");
    int management = NODE.getInt("relay.port-management");
    int remoting = NODE.getInt("relay.port-remote");
    Set<Integer> public_ = Set.of(NODE.getInt("relay.port-access"), NODE.getInt("relay.port-relay"));
    Map<String, String> podLabels = deployment.getSpec().getTemplate().getMetadata().getLabels();
    for (NetworkPolicyIngressRule rule : policy.getSpec().getIngress()) {
      assertFalse(rule.getPorts() == null || rule.getPorts().isEmpty(), "every rule names its ports (one without opens them all): " + rule);
      Set<Integer> ports = rule.getPorts().stream().map(p -> p.getPort().getIntVal()).collect(Collectors.toSet());
      if (!ports.contains(management) && !ports.contains(remoting)) {
        assertTrue(public_.containsAll(ports), "only the access and relay ports are open to every pod: " + ports);
        continue;
      }
      assertFalse(rule.getFrom() == null || rule.getFrom().isEmpty(), "ports " + ports + " are open to a named set of peers only");
      for (NetworkPolicyPeer peer : rule.getFrom()) {
        assertEquals(null, peer.getIpBlock(), "no IP block reaches management or remoting");
        boolean relayPods = peer.getNamespaceSelector() == null && selects(peer.getPodSelector(), podLabels);
        boolean namedNamespace =
            peer.getNamespaceSelector() != null
                && peer.getNamespaceSelector().getMatchLabels() != null
                && !peer.getNamespaceSelector().getMatchLabels().isEmpty();
        assertTrue(relayPods || namedNamespace, "ports " + ports + ": a peer is the relay pods or one named namespace, never every pod or namespace (an ingress controller among them): " + peer);
        if (ports.contains(remoting)) {
          assertTrue(relayPods, "remoting is open to relay pods only: " + peer);
        }
      }
    }
    for (Service service : base.stream().filter(Service.class::isInstance).map(Service.class::cast).toList()) {
      String type = service.getSpec().getType() == null ? "ClusterIP" : service.getSpec().getType();
      assertEquals("ClusterIP", type, service.getMetadata().getName() + " stays cluster-internal; ingresses expose the relay");
      service.getSpec().getPorts().forEach(p -> assertNotEquals(remoting, p.getPort().intValue(), "remoting is never a Service port"));
    }
  }

  /** Whether {@code selector} has labels and all of them are on the pods labelled {@code labels}. */
  private static boolean selects(LabelSelector selector, Map<String, String> labels) {
    return selector != null
        && selector.getMatchLabels() != null
        && !selector.getMatchLabels().isEmpty()
        && labels.entrySet().containsAll(selector.getMatchLabels().entrySet());
  }

  @Test
  void noIngressOrRouteReachesTheManagementPort() {
    Set<String> exposed = Set.of("relay-access", "relay-websocket");
    int management = NODE.getInt("relay.port-management");
    for (HasMetadata object : Manifests.objectsIn(OVERLAYS)) {
      if (object instanceof Ingress ingress) {
        for (var rule : ingress.getSpec().getRules()) {
          for (var path : rule.getHttp().getPaths()) {
            var backend = path.getBackend().getService();
            assertTrue(exposed.contains(backend.getName()), ingress.getMetadata().getName() + " routes to " + backend.getName());
            assertFalse("management".equals(backend.getPort().getName()) || Integer.valueOf(management).equals(backend.getPort().getNumber()), ingress.getMetadata().getName() + " routes to the management port");
          }
        }
        assertEquals(null, ingress.getSpec().getDefaultBackend(), ingress.getMetadata().getName() + " has no default backend");
      } else if (object instanceof HTTPRoute route) {
        for (var rule : route.getSpec().getRules()) {
          for (var backend : rule.getBackendRefs()) {
            assertTrue(exposed.contains(backend.getName()), route.getMetadata().getName() + " routes to " + backend.getName());
            assertNotEquals(management, backend.getPort(), route.getMetadata().getName() + " routes to the management port");
          }
        }
      }
    }
  }

  @Test
  void theManagementPortServesProbesOnThePodIpAndIsReadOnly() {
    EnvVar host = container.getEnv().stream().filter(e -> e.getName().equals("RELAY_MANAGEMENT_HOST")).findFirst().orElse(null);
    boolean podIp =
        host == null // the default, RELAY_HOST: the pod IP
            || "0.0.0.0".equals(host.getValue())
            || (host.getValueFrom() != null && "status.podIP".equals(host.getValueFrom().getFieldRef().getFieldPath()));
    assertTrue(podIp, "kubelet probes, Prometheus and bootstrap probes reach the management port at the pod IP: " + host);
    Map<String, String> settings = new java.util.HashMap<>(env());
    for (Path dir : kustomizationDirs()) {
      for (JsonNode generator : Manifests.yaml(dir.resolve("kustomization.yaml")).path("configMapGenerator")) {
        for (JsonNode literal : generator.path("literals")) {
          String[] kv = literal.asText().split("=", 2);
          settings.put(kv[0], kv.length > 1 ? kv[1] : "");
        }
      }
    }
    String writes = settings.getOrDefault("RELAY_MANAGEMENT_WRITES", NODE.getString("relay.management-writes"));
    assertTrue(Set.of("off", "false", "no").contains(writes), "cluster writes on the management port stay off: RELAY_MANAGEMENT_WRITES=" + writes);
  }

  @Test
  void ingressNginxHashesThePathAndNeverTheQuery() {
    IngressAnnotations ingresses = IngressAnnotations.of("ingress-nginx");
    assertEquals("$uri", ingresses.relay().get("nginx.ingress.kubernetes.io/upstream-hash-by"), "the hash key is the path alone");
    long ping = NODE.getDuration("relay.ping-interval").toSeconds();
    assertTrue(Long.parseLong(ingresses.relay().get("nginx.ingress.kubernetes.io/proxy-read-timeout")) > ping);
    assertTrue(Long.parseLong(ingresses.relay().get("nginx.ingress.kubernetes.io/proxy-send-timeout")) > ping);
    assertFalse(ingresses.access().containsKey("nginx.ingress.kubernetes.io/upstream-hash-by"), "the access API goes round robin");
  }

  @Test
  void haproxyIngressBalancesOnTheUriWithoutTheQueryWithConsistentHashing() {
    IngressAnnotations ingresses = IngressAnnotations.of("haproxy-ingress");
    assertEquals("uri", ingresses.relay().get("haproxy.org/load-balance"), "balance uri stops at the '?'; 'whole' or url_param would hash the code");
    String snippet = ingresses.relay().get("haproxy.org/backend-config-snippet");
    assertTrue(snippet.contains("hash-type consistent"), snippet);
    assertFalse(snippet.contains("balance"), "the balance algorithm is set once, by the annotation");
    assertEquals("roundrobin", ingresses.access().get("haproxy.org/load-balance"));
  }

  /** The annotations of an overlay's two Ingresses, each checked to route to its Service's port. */
  private record IngressAnnotations(Map<String, String> relay, Map<String, String> access) {
    static IngressAnnotations of(String overlay) {
      List<HasMetadata> objects = Manifests.objectsIn(OVERLAYS.resolve(overlay));
      return new IngressAnnotations(
          backedBy(objects, "relay-websocket", "relay"), backedBy(objects, "relay-access", "access"));
    }

    private static Map<String, String> backedBy(List<HasMetadata> objects, String service, String portName) {
      Ingress ingress = Manifests.one(objects, Ingress.class, service);
      var backend = ingress.getSpec().getRules().get(0).getHttp().getPaths().get(0).getBackend().getService();
      assertEquals(service, backend.getName());
      assertEquals(portName, backend.getPort().getName());
      return ingress.getMetadata().getAnnotations();
    }
  }

  @Test
  void theGatewayApiVariantHashesThePathThroughKong() {
    Path dir = OVERLAYS.resolve("gateway-api-kong");
    List<HasMetadata> objects = Manifests.objectsIn(dir);
    GenericKubernetesResource policy = Manifests.one(objects, GenericKubernetesResource.class, "relay-path-hash");
    assertEquals("consistent-hashing", policy.get("spec", "algorithm"));
    assertEquals("path", policy.get("spec", "hashOn", "input"), "Kong hashes the path alone");
    HTTPRoute route = Manifests.one(objects, HTTPRoute.class, "relay-websocket");
    assertEquals("relay-websocket", route.getSpec().getRules().get(0).getBackendRefs().get(0).getName());
    assertEquals(NODE.getInt("relay.port-relay"), route.getSpec().getRules().get(0).getBackendRefs().get(0).getPort());
    String patch = Manifests.yaml(dir.resolve("kustomization.yaml")).path("patches").get(0).path("patch").asText();
    assertTrue(patch.contains("konghq.com/upstream-policy: relay-path-hash"), "the policy is attached to the relay Service");
  }


  private Map<String, String> env() {
    return container.getEnv().stream().filter(e -> e.getValue() != null).collect(Collectors.toMap(EnvVar::getName, EnvVar::getValue));
  }

  private EnvVar envVar(String name) {
    return container.getEnv().stream().filter(e -> e.getName().equals(name)).findFirst().orElseThrow(() -> new AssertionError("the Deployment does not set " + name));
  }

  private static List<Path> kustomizationDirs() {
    return Manifests.manifestFiles(Manifests.kubernetes()).stream().map(Path::getParent).distinct().filter(d -> Files.isRegularFile(d.resolve("kustomization.yaml"))).toList();
  }
}
