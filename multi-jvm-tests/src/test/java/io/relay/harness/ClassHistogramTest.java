package io.relay.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;

class ClassHistogramTest {
  private static final String EARLIER = """
      12030:
       num     #instances         #bytes  class name (module)
      -------------------------------------------------------
         1:          7205         332912  [B (java.base@17.0.21.1)
         2:          1426         175840  java.lang.Class (java.base@17.0.21.1)
         3:           100           2400  io.relay.topic.TopicActor
      Total          8731         511152
      """;
  private static final String LATER = """
      12030:
       num     #instances         #bytes  class name (module)
      -------------------------------------------------------
         1:          7000         330000  [B (java.base@17.0.21.1)
         2:          1426         175840  java.lang.Class (java.base@17.0.21.1)
         3:           400           9600  io.relay.topic.TopicActor
         4:            10            160  io.relay.topic.NewThing
      Total          8836         515600
      """;

  @Test
  void namesTheClassesWhoseLiveBytesGrewLargestFirst() {
    List<ClassHistogram.Growth> grown = ClassHistogram.parse(LATER).grownSince(ClassHistogram.parse(EARLIER), 10);
    assertEquals(List.of(new ClassHistogram.Growth("io.relay.topic.TopicActor", 300, 7200), new ClassHistogram.Growth("io.relay.topic.NewThing", 10, 160)), grown,
        "byte arrays shrank and classes stayed: neither grew");
  }

  @Test
  void keepsOnlyTheTopGrowth() {
    assertEquals(1, ClassHistogram.parse(LATER).grownSince(ClassHistogram.parse(EARLIER), 1).size());
  }

  @Test
  void refusesOutputWithoutAHistogram() {
    assertThrows(IllegalArgumentException.class, () -> ClassHistogram.parse("12030:\nGC.class_histogram is not available\n"));
  }
}
