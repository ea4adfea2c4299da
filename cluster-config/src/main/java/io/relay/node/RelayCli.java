package io.relay.node;

import com.typesafe.config.ConfigFactory;
import io.relay.config.SettingsReader;
import java.util.concurrent.Callable;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.remote.RemoteTransportException;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code relay} command: {@code serve} (the default) runs a node, {@code token} mints tokens. */
@Command(
    name = "relay",
    mixinStandardHelpOptions = true,
    versionProvider = RelayCli.Version.class,
    description = "Horizontally scalable WebSocket relay for remote laboratories.",
    subcommands = {RelayCli.Serve.class, TokenCommand.class, ConnectCommand.class})
public final class RelayCli implements Callable<Integer> {

  /** Exit status for configuration the node refuses. */
  static final int BAD_CONFIGURATION = 2;

  public static void main(String[] args) {
    int status = new CommandLine(new RelayCli()).execute(args);
    if (status != 0) {
      System.exit(status);
    }
  }

  @Override
  public Integer call() {
    return new Serve().call();
  }

  /** Runs a node configured by RELAY_* environment variables until it is shut down. */
  @Command(name = "serve", description = "Run a relay node (configured by RELAY_* environment variables).")
  static final class Serve implements Callable<Integer> {
    @Override
    public Integer call() {
      RelayNode.Settings settings;
      try {
        LogFormat.apply(ConfigFactory.load()); // before the settings are read, which log (the TLS line)
        settings = RelayNode.load(ConfigFactory.empty());
      } catch (SettingsReader.InvalidSettingException e) {
        System.err.println("relay: invalid configuration: " + e.getMessage());
        return BAD_CONFIGURATION;
      }
      ActorSystem<Void> system;
      try {
        system = RelayNode.start(settings);
      } catch (RemoteTransportException e) { // the cluster port: Artery binds it as the actor system starts
        System.err.printf(
            "relay: cannot bind the cluster port to %s:%d (RELAY_HOST, RELAY_PORT_REMOTE): %s%n",
            settings.node().host(), settings.node().portRemote(), e.getMessage());
        return BAD_CONFIGURATION;
      }
      system.getWhenTerminated().toCompletableFuture().join();
      return 0;
    }
  }

  /** This build's version, from the jar's manifest; "development build" outside the jar (tests, an IDE). */
  static String version() {
    String version = RelayCli.class.getPackage().getImplementationVersion();
    return version == null ? "development build" : version;
  }

  /** Reports the version from the jar's manifest. */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      return new String[] {"relay " + version()};
    }
  }
}
