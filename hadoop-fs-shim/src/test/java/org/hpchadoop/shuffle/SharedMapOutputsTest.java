package org.hpchadoop.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.JobID;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link SharedMapOutputs}: the configured dirs, the NodeManager's layout, what is missing. */
class SharedMapOutputsTest {
  @TempDir
  java.nio.file.Path tmp;

  private static final TaskAttemptID MAP =
      TaskAttemptID.forName("attempt_1764097000123_0007_m_000003_1");

  @Test
  void parsesHostDirEntries() {
    Configuration conf = new Configuration(false);
    conf.set(SharedMapOutputs.LOCAL_DIRS, " 10.0.0.1=/pfs/c/nm-local/n1 , n1=/pfs/c/nm-local/n1,");
    SharedMapOutputs outputs = SharedMapOutputs.fromConf(conf);
    assertEquals("/pfs/c/nm-local/n1", outputs.dirs().get("10.0.0.1"));
    assertEquals(2, outputs.dirs().size());
    assertTrue(SharedMapOutputs.fromConf(new Configuration(false)).dirs().isEmpty());
    conf.set(SharedMapOutputs.LOCAL_DIRS, "n1:relative/dir");
    assertThrows(IllegalArgumentException.class, () -> SharedMapOutputs.fromConf(conf));
  }

  @Test
  void applicationIdAndHost() {
    assertEquals("application_1764097000123_0007", SharedMapOutputs.applicationId(MAP.getJobID()));
    assertEquals("application_1_12345",
        SharedMapOutputs.applicationId(new JobID("1", 12345)));
    assertEquals("10.0.0.1", SharedMapOutputs.hostOf("10.0.0.1:13562"));
    assertEquals("n1", SharedMapOutputs.hostOf("n1"));
  }

  @Test
  void findsTheNodeManagersLayoutAndSaysWhatIsMissing() throws Exception {
    java.nio.file.Path dir = tmp.resolve("nm-local/n2");
    java.nio.file.Path attempt = Files.createDirectories(dir.resolve(
        "usercache/alice/appcache/application_1764097000123_0007/output/" + MAP));
    SharedMapOutputs outputs = new SharedMapOutputs(java.util.Map.of("10.0.0.2", dir.toString()));

    SharedMapOutputs.Lookup unknown = outputs.locate("10.0.0.9:13562", MAP, "alice");
    assertFalse(unknown.found());
    assertNull(unknown.output());
    assertTrue(unknown.missing().contains("10.0.0.9"), unknown.missing());

    SharedMapOutputs.Lookup noIndex = outputs.locate("10.0.0.2:13562", MAP, "alice");
    assertFalse(noIndex.found());
    assertTrue(noIndex.missing().contains("file.out.index"), noIndex.missing());

    Files.writeString(attempt.resolve("file.out.index"), "");
    Files.writeString(attempt.resolve("file.out"), "");
    SharedMapOutputs.Lookup found = outputs.locate("10.0.0.2:13562", MAP, "alice");
    assertTrue(found.found(), found.missing());
    assertEquals(attempt.resolve("file.out").toString(), found.output().toUri().getPath());
    assertFalse(outputs.locate("10.0.0.2:13562", MAP, "bob").found());
  }
}
