package org.hpchadoop.fs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.OptionalInt;
import java.util.OptionalLong;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Tests {@link LustreLayout} against a stand-in {@code lfs} shell script (selected through
 * {@code pfs.lfs.command}) that logs its arguments and prints output in the formats real
 * {@code lfs getstripe} prints. It is a stand-in because Lustre cannot run here.
 */
class LustreLayoutTest {
  private static final long MIB = 1024 * 1024;

  @TempDir
  Path tmp;

  /** Writes a stand-in lfs that appends its arguments to lfs.log, prints output, exits exit. */
  private Path fakeLfs(String output, int exit) throws IOException {
    Path script = tmp.resolve("bin/lfs");
    Files.createDirectories(script.getParent());
    Files.writeString(script, "#!/bin/sh\n"
        + "echo \"$@\" >> '" + tmp.resolve("lfs.log") + "'\n"
        + "cat <<'EOF'\n" + output + "EOF\n"
        + "exit " + exit + "\n");
    Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwxr-xr-x"));
    return script;
  }

  private List<String> calls() throws IOException {
    Path log = tmp.resolve("lfs.log");
    return Files.exists(log) ? Files.readAllLines(log) : List.of();
  }

  private Path dir() throws IOException {
    return Files.createDirectories(tmp.resolve("data"));
  }

  @Test
  void bareNumberOfGetstripeS() throws IOException {
    LustreLayout l = new LustreLayout(fakeLfs("4194304\n", 0).toString());
    Path d = dir();
    assertEquals(OptionalLong.of(4 * MIB), l.stripeSize(d));
    assertEquals(List.of("getstripe -d -S " + d), calls());
    Path f = Files.createFile(d.resolve("f"));
    l.stripeSize(f);
    assertEquals("getstripe -S " + f, calls().get(1));
  }

  @Test
  void directoryDefaultFormat() throws IOException {
    String out = "stripe_count:  4 stripe_size:   16777216 pattern:       raid0 stripe_offset: -1\n";
    LustreLayout l = new LustreLayout(fakeLfs(out, 0).toString());
    assertEquals(OptionalLong.of(16 * MIB), l.stripeSize(dir()));
    assertEquals(OptionalInt.of(4), l.stripeCount(dir()));
  }

  @Test
  void verboseFileFormat() throws IOException {
    String out = "/mnt/lustre/data/part-00000\n"
        + "lmm_stripe_count:  2\n"
        + "lmm_stripe_size:   1048576\n"
        + "lmm_pattern:       raid0\n"
        + "lmm_layout_gen:    0\n"
        + "lmm_stripe_offset: 3\n"
        + "\tobdidx\t\t objid\t\t objid\t\t group\n"
        + "\t     3\t      12345678\t    0xbc614e\t             0\n";
    LustreLayout l = new LustreLayout(fakeLfs(out, 0).toString());
    assertEquals(OptionalLong.of(MIB), l.stripeSize(dir()));
    assertEquals(OptionalInt.of(2), l.stripeCount(dir()));
  }

  @Test
  void suffixedAndCompositeFormats() {
    assertEquals(OptionalLong.of(4 * MIB),
        LustreLayout.parse("stripe_count:  1 stripe_size:   4M stripe_offset: -1\n", "stripe_size"));
    String pfl = "  lcm_layout_gen:    2\n  components:\n"
        + "    - lcme_id:             1\n      lcme_extent.e_start: 0\n"
        + "      sub_layout:\n        lmm_stripe_count:  1\n        lmm_stripe_size:   1048576\n"
        + "    - lcme_id:             2\n"
        + "      sub_layout:\n        lmm_stripe_count:  4\n        lmm_stripe_size:   4194304\n";
    assertEquals(OptionalLong.of(MIB), LustreLayout.parse(pfl, "stripe_size"));
    assertEquals(OptionalLong.of(-1), LustreLayout.parse("-1\n", "stripe_count"));
    assertEquals(OptionalLong.empty(), LustreLayout.parse("/x has no stripe info\n", "stripe_size"));
  }

  @Test
  void failingLfsMeansUnknown() throws IOException {
    LustreLayout l = new LustreLayout(
        fakeLfs("error: getstripe: '/x' is not on a Lustre filesystem\n", 2).toString());
    assertEquals(OptionalLong.empty(), l.stripeSize(dir()));
    LustreLayout missing = new LustreLayout(tmp.resolve("no-such-lfs").toString());
    assertEquals(OptionalLong.empty(), missing.stripeSize(dir()));
  }

  @Test
  void setstripeArguments() throws IOException {
    LustreLayout l = new LustreLayout(fakeLfs("", 0).toString());
    Path d = dir();
    l.apply(d, new StripeSettings(4, 16 * MIB, -1));
    l.apply(d, new StripeSettings(-1, 0, 2));
    assertEquals(List.of("setstripe -c 4 -S 16777216 " + d, "setstripe -c -1 -i 2 " + d), calls());
  }

  @Test
  void setstripeFailureIsAnError() throws IOException {
    LustreLayout l = new LustreLayout(fakeLfs("lfs setstripe: Invalid argument\n", 22).toString());
    IOException e = assertThrows(IOException.class,
        () -> l.apply(dir(), new StripeSettings(4, 0, -1)));
    assertTrue(e.getMessage().contains("Invalid argument"), e.getMessage());
  }

  @Test
  void throughTheFileSystem() throws IOException {
    Configuration conf = new Configuration(false);
    conf.set(PfsConfigKeys.LAYOUT, "lustre");
    conf.set(PfsConfigKeys.LFS_COMMAND, fakeLfs("8388608\n", 0).toString());
    conf.set(PfsConfigKeys.STRIPE_ROLES, "output");
    conf.set(PfsConfigKeys.roleKey("output", "dir"), tmp.resolve("out").toString());
    conf.set(PfsConfigKeys.roleKey("output", "count"), "8");
    conf.set(PfsConfigKeys.roleKey("output", "size"), "8m");
    try (PfsFileSystem fs = new PfsFileSystem()) {
      fs.initialize(URI.create("pfs:///"), conf);
      org.apache.hadoop.fs.Path out = new org.apache.hadoop.fs.Path("pfs://" + tmp.resolve("out"));
      assertTrue(fs.mkdirs(out));
      for (int i = 0; i < 3; i++) {
        fs.create(new org.apache.hadoop.fs.Path(out, "part-" + i)).close();
      }
      for (org.apache.hadoop.fs.FileStatus st : fs.listStatus(out)) {
        assertEquals(32 * MIB, st.getBlockSize()); // 8 MiB stripes, 32 MiB floor: 4 stripes
      }
      assertEquals(List.of("setstripe -c 8 -S 8388608 " + tmp.resolve("out"),
          "getstripe -d -S " + tmp.resolve("out")), calls());
    }
  }
  /**
   * A stand-in lfs that hangs: prints a line, then waits for a child {@code sleep} whose pid it
   * writes to sleep.pid. The child keeps the output open, so reading the output before waiting
   * (the old code) blocked for good.
   */
  private Path hangingLfs() throws IOException {
    Path script = tmp.resolve("bin/lfs");
    Files.createDirectories(script.getParent());
    Files.writeString(script, "#!/bin/sh\n"
        + "echo \"$@\" >> '" + tmp.resolve("lfs.log") + "'\n"
        + "echo 'lfs: waiting for the MDS'\n"
        + "sleep 1000 &\n"
        + "echo $! > '" + tmp.resolve("sleep.pid") + "'\n"
        + "wait\n");
    Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwxr-xr-x"));
    return script;
  }

  private void assertSleepKilled() throws Exception {
    long pid = Long.parseLong(Files.readString(tmp.resolve("sleep.pid")).strip());
    long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
    while (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)
        && System.nanoTime() < deadline) {
      Thread.sleep(50);
    }
    assertFalse(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false),
        "the hung lfs's child is killed too");
  }

  @Test
  void hungLfsTimesOut() throws Exception {
    LustreLayout l = new LustreLayout(hangingLfs().toString(), 1);
    Path d = dir();
    long start = System.nanoTime();
    IOException e = assertTimeoutPreemptively(Duration.ofSeconds(10),
        () -> assertThrows(IOException.class, () -> l.stripeSize(d)));
    long seconds = Duration.ofNanos(System.nanoTime() - start).toSeconds();
    assertTrue(seconds < 5, "took " + seconds + " s");
    assertTrue(e.getMessage().contains("getstripe -d -S " + d), e.getMessage());
    assertTrue(e.getMessage().contains("timed out after 1 s"), e.getMessage());
    assertTrue(e.getMessage().contains(PfsConfigKeys.LFS_TIMEOUT), e.getMessage());
    assertSleepKilled();

    IOException set = assertTimeoutPreemptively(Duration.ofSeconds(10),
        () -> assertThrows(IOException.class, () -> l.apply(d, new StripeSettings(4, 0, -1))));
    assertTrue(set.getMessage().contains("setstripe -c 4 " + d), set.getMessage());
  }

  @Test
  void timeoutFromConfigurationAndStripeSizeUnknownAfterTimeout() throws Exception {
    Configuration conf = new Configuration(false);
    conf.set(PfsConfigKeys.LAYOUT, "lustre");
    conf.set(PfsConfigKeys.LFS_COMMAND, hangingLfs().toString());
    assertEquals(LustreLayout.DEFAULT_TIMEOUT_SECONDS,
        ((LustreLayout) StripeLayout.fromConf(conf)).getTimeoutSeconds());
    conf.set(PfsConfigKeys.LFS_TIMEOUT, "2m");
    assertEquals(120, ((LustreLayout) StripeLayout.fromConf(conf)).getTimeoutSeconds());
    conf.set(PfsConfigKeys.LFS_TIMEOUT, "0");
    assertThrows(IllegalArgumentException.class, () -> StripeLayout.fromConf(conf));
    conf.set(PfsConfigKeys.LFS_TIMEOUT, "1");
    assertInstanceOf(LustreLayout.class, StripeLayout.fromConf(conf));
    try (PfsFileSystem fs = new PfsFileSystem()) {
      fs.initialize(URI.create("pfs:///"), conf);
      org.apache.hadoop.fs.Path f = new org.apache.hadoop.fs.Path("pfs://" + dir().resolve("f"));
      long bs = assertTimeoutPreemptively(Duration.ofSeconds(10), () -> fs.getDefaultBlockSize(f));
      assertEquals(32 * MIB, bs, "unknown stripe size: the 32 MiB default");
      assertEquals(32 * MIB, fs.getDefaultBlockSize(f));
      assertEquals(1, calls().size(), "the directory is remembered as unknown: lfs ran once");
    }
  }
}
