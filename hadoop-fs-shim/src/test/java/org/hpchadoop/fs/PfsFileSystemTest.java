package org.hpchadoop.fs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.BlockLocation;
import org.apache.hadoop.fs.CreateFlag;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileContext;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.permission.FsPermission;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PfsFileSystemTest {
  private static final long MIB = 1024 * 1024;

  @TempDir
  java.nio.file.Path tmp;

  @BeforeEach
  void reset() {
    RecordingLayout.reset();
  }

  private static Configuration conf() {
    Configuration conf = new Configuration(false);
    conf.set("fs.pfs.impl", PfsFileSystem.class.getName());
    conf.set("fs.AbstractFileSystem.pfs.impl", PfsFs.class.getName());
    return conf;
  }

  private static PfsFileSystem open(Configuration conf) throws IOException {
    PfsFileSystem fs = new PfsFileSystem();
    fs.initialize(URI.create("pfs:///"), conf);
    return fs;
  }

  private Path pfs(String child) {
    return new Path("pfs://" + tmp.resolve(child));
  }

  private void touch(Path p, long len) throws IOException {
    try (RandomAccessFile f = new RandomAccessFile(p.toUri().getPath(), "rw")) {
      f.setLength(len); // sparse
    }
  }

  @Test
  void blockSizeIsConfiguredSplitSizeWithoutLayout() throws IOException {
    Configuration conf = conf();
    conf.set(PfsConfigKeys.SPLIT_SIZE, "64m");
    conf.set(PfsConfigKeys.LOCAL_BLOCK_SIZE, "16m");
    try (PfsFileSystem fs = open(conf)) {
      Path f = pfs("a");
      touch(f, 10);
      assertEquals(64 * MIB, fs.getFileStatus(f).getBlockSize());
      assertEquals(64 * MIB, fs.getDefaultBlockSize(f));
      assertEquals(64 * MIB, fs.listStatus(f)[0].getBlockSize());
    }
  }

  @Test
  void splitSizeDefaultsToLocalBlockSizeThen32MiB() throws IOException {
    Configuration conf = conf();
    conf.set(PfsConfigKeys.LOCAL_BLOCK_SIZE, "16m");
    try (PfsFileSystem fs = open(conf)) {
      assertEquals(16 * MIB, fs.getSplitSize());
    }
    try (PfsFileSystem fs = open(conf())) {
      assertEquals(32 * MIB, fs.getSplitSize());
      assertEquals(32 * MIB, fs.getDefaultBlockSize(pfs("missing")));
    }
  }

  @Test
  void blockSizeFromStripeSizeCachedPerDirectory() throws IOException {
    Configuration conf = conf();
    conf.set(PfsConfigKeys.LAYOUT, RecordingLayout.class.getName());
    conf.set("test.stripe.size", "8m");
    conf.set(PfsConfigKeys.LOCAL_BLOCK_SIZE, "8m"); // the floor: 8 MiB stripes give 8 MiB blocks
    try (PfsFileSystem fs = open(conf)) {
      Path dir = pfs("striped");
      assertTrue(fs.mkdirs(dir));
      for (int i = 0; i < 5; i++) {
        touch(new Path(dir, "part-" + i), 1000);
      }
      FileStatus[] st = fs.listStatus(dir);
      assertEquals(5, st.length);
      for (FileStatus s : st) {
        assertEquals(8 * MIB, s.getBlockSize());
        assertTrue(s.getPermission() != null && !s.getOwner().isEmpty());
      }
      assertEquals(8 * MIB, fs.getFileStatus(new Path(dir, "part-0")).getBlockSize());
      assertEquals(8 * MIB, fs.getDefaultBlockSize(new Path(dir, "new-output")));
      assertEquals(1, RecordingLayout.LOOKUPS.get(), "one lookup for the whole directory");
    }
  }

  private static PfsFileSystem striped(String stripe, String splitSize) throws IOException {
    Configuration conf = conf();
    conf.set(PfsConfigKeys.LAYOUT, RecordingLayout.class.getName());
    conf.set("test.stripe.size", stripe);
    if (splitSize != null) {
      conf.set(PfsConfigKeys.SPLIT_SIZE, splitSize);
    }
    return open(conf);
  }

  @Test
  void explicitSplitSizeWinsOverStripeSize() throws IOException {
    try (PfsFileSystem fs = striped("1m", "256m")) {
      assertTrue(fs.isSplitSizeExplicit());
      Path f = pfs("input");
      touch(f, 10);
      assertEquals(256 * MIB, fs.getDefaultBlockSize(f));
      assertEquals(256 * MIB, fs.getFileStatus(f).getBlockSize());
      assertEquals(0, RecordingLayout.LOOKUPS.get(), "no stripe lookup needed");
    }
    try (PfsFileSystem fs = striped("64m", "16m")) { // smaller than the stripe: still wins
      assertEquals(16 * MIB, fs.getDefaultBlockSize(pfs("x")));
    }
  }

  @Test
  void oneMiBStripeGivesStripeAlignedBlocksOfAtLeast32MiB() throws IOException {
    try (PfsFileSystem fs = striped("1m", null)) {
      assertFalse(fs.isSplitSizeExplicit());
      Path f = pfs("input");
      touch(f, 100 * MIB);
      long bs = fs.getFileStatus(f).getBlockSize();
      assertEquals(32 * MIB, bs); // not 1 MiB: 100 maps for 100 MiB otherwise
      assertEquals(0, bs % MIB);
      assertEquals(4, fs.getFileBlockLocations(fs.getFileStatus(f), 0, 100 * MIB).length);
    }
    try (PfsFileSystem fs = striped("3m", null)) { // not a divisor of 32 MiB: the next multiple
      assertEquals(33 * MIB, fs.getDefaultBlockSize(pfs("x")));
    }
  }

  @Test
  void stripeOfAtLeastTheFloorIsTheBlockSize() throws IOException {
    try (PfsFileSystem fs = striped("64m", null)) {
      assertEquals(64 * MIB, fs.getDefaultBlockSize(pfs("x")));
    }
    try (PfsFileSystem fs = striped("32m", null)) {
      assertEquals(32 * MIB, fs.getDefaultBlockSize(pfs("x")));
    }
    Configuration conf = conf();
    conf.set(PfsConfigKeys.LAYOUT, RecordingLayout.class.getName());
    conf.set("test.stripe.size", "4m");
    conf.set(PfsConfigKeys.LOCAL_BLOCK_SIZE, "128m"); // the floor follows fs.local.block.size
    try (PfsFileSystem fs = open(conf)) {
      assertEquals(128 * MIB, fs.getDefaultBlockSize(pfs("x")));
    }
  }

  @Test
  void alignedBlockSizeRule() {
    assertEquals(32 * MIB, PfsFileSystem.alignedBlockSize(MIB, 32 * MIB));
    assertEquals(32 * MIB, PfsFileSystem.alignedBlockSize(64 * 1024, 32 * MIB));
    assertEquals(33 * MIB, PfsFileSystem.alignedBlockSize(3 * MIB, 32 * MIB));
    assertEquals(64 * MIB, PfsFileSystem.alignedBlockSize(64 * MIB, 32 * MIB));
    assertEquals(1L << 40, PfsFileSystem.alignedBlockSize(1L << 40, 32 * MIB));
    assertThrows(IllegalArgumentException.class, () -> PfsFileSystem.alignedBlockSize(0, 32 * MIB));
  }

  @Test
  void blockLocationsFor100MiBFileWith32MiBBlocks() throws IOException {
    Configuration conf = conf();
    conf.set(PfsConfigKeys.LOCALITY_HOSTS, "n1, n2,n3");
    try (PfsFileSystem fs = open(conf)) {
      Path f = pfs("big");
      touch(f, 100 * MIB);
      FileStatus st = fs.getFileStatus(f);
      assertEquals(32 * MIB, st.getBlockSize());
      BlockLocation[] locs = fs.getFileBlockLocations(st, 0, st.getLen());
      assertEquals(4, locs.length);
      for (int i = 0; i < 4; i++) {
        assertEquals(i * 32 * MIB, locs[i].getOffset());
        assertEquals(i < 3 ? 32 * MIB : 4 * MIB, locs[i].getLength());
        List<String> hosts = Arrays.asList(locs[i].getHosts());
        assertEquals(3, hosts.size());
        assertTrue(hosts.containsAll(List.of("n1", "n2", "n3")));
      }
      assertArrayEquals(new String[] {"n1", "n2", "n3"}, locs[0].getHosts());
      assertArrayEquals(new String[] {"n2", "n3", "n1"}, locs[1].getHosts());

      BlockLocation[] mid = fs.getFileBlockLocations(st, 40 * MIB, 30 * MIB); // 40..70 MiB
      assertEquals(2, mid.length);
      assertEquals(32 * MIB, mid[0].getOffset());
      assertEquals(64 * MIB, mid[1].getOffset());
      BlockLocation[] tail = fs.getFileBlockLocations(st, 99 * MIB, 10 * MIB);
      assertEquals(1, tail.length);
      assertEquals(96 * MIB, tail[0].getOffset());
      assertEquals(4 * MIB, tail[0].getLength());

      assertEquals(0, fs.getFileBlockLocations(st, 0, 0).length);
      assertEquals(0, fs.getFileBlockLocations(st, 100 * MIB, 1).length);
      assertEquals(0, fs.getFileBlockLocations(st, 200 * MIB, 1).length);
      assertThrows(IllegalArgumentException.class, () -> fs.getFileBlockLocations(st, -1, 1));
      assertEquals(4, fs.getFileBlockLocations(f, 0, Long.MAX_VALUE / 2).length);
    }
  }

  @Test
  void blockLocationsDefaultToLocalhost() throws IOException {
    try (PfsFileSystem fs = open(conf())) {
      FileStatus st = new FileStatus(10, false, 1, 4, 0, pfs("x"));
      BlockLocation[] locs = fs.getFileBlockLocations(st, 0, 10);
      assertEquals(3, locs.length);
      assertArrayEquals(new String[] {"localhost"}, locs[2].getHosts());
      assertEquals(2, locs[2].getLength());
    }
  }

  @Test
  void mkdirsAppliesLayoutOnceToNewDirectoriesOnly() throws IOException {
    Configuration conf = conf();
    conf.set(PfsConfigKeys.LAYOUT, RecordingLayout.class.getName());
    conf.set(PfsConfigKeys.STRIPE_ROLES, "output");
    conf.set(PfsConfigKeys.roleKey("output", "dir"), tmp.toString());
    conf.set(PfsConfigKeys.roleKey("output", "count"), "4");
    conf.set(PfsConfigKeys.roleKey("output", "size"), "16m");
    try (PfsFileSystem fs = open(conf)) {
      Path out = pfs("out");
      assertTrue(fs.mkdirs(out));
      assertEquals(List.of(tmp.resolve("out")), RecordingLayout.APPLIED);
      assertEquals(new StripeSettings(4, 16 * MIB, -1), RecordingLayout.APPLIED_SETTINGS.get(0));

      assertTrue(fs.mkdirs(out)); // exists: not again
      assertEquals(1, RecordingLayout.APPLIED.size());

      Files.createDirectories(tmp.resolve("full"));
      Files.writeString(tmp.resolve("full/data"), "x");
      assertTrue(fs.mkdirs(pfs("full"))); // existing, non-empty: never restriped
      assertEquals(1, RecordingLayout.APPLIED.size());

      assertTrue(fs.mkdirs(pfs("a/b/c"))); // each new level once, parents first
      assertEquals(List.of(tmp.resolve("out"), tmp.resolve("a"), tmp.resolve("a/b"),
          tmp.resolve("a/b/c")), RecordingLayout.APPLIED);

      try (FSDataOutputStream o = fs.create(pfs("new/part-0"))) { // parent made by create()
        o.write(1);
      }
      assertEquals(tmp.resolve("new"), RecordingLayout.APPLIED.get(4));
      assertEquals(5, RecordingLayout.APPLIED.size());
    }
  }

  /**
   * Issue 17 item 5: a directory the shim creates takes the layout of the role whose directory
   * contains it (teragen's input/teragen got the output layout before), the innermost role when
   * role directories nest; one outside every role's directory gets none.
   */
  @Test
  void mkdirsAppliesTheLayoutOfTheRoleWhoseDirectoryContainsIt() throws IOException {
    Configuration conf = conf();
    conf.set(PfsConfigKeys.LAYOUT, RecordingLayout.class.getName());
    conf.set(PfsConfigKeys.STRIPE_ROLES, "input, output,staging");
    conf.set(PfsConfigKeys.roleKey("input", "dir"), tmp.resolve("run/input").toString());
    conf.set(PfsConfigKeys.roleKey("input", "count"), "2");
    conf.set(PfsConfigKeys.roleKey("output", "dir"), tmp.resolve("run/output").toString());
    conf.set(PfsConfigKeys.roleKey("output", "count"), "8");
    conf.set(PfsConfigKeys.roleKey("output", "size"), "1m");
    conf.set(PfsConfigKeys.roleKey("staging", "dir"), tmp.resolve("run/output/staging/").toString());
    conf.set(PfsConfigKeys.roleKey("staging", "index"), "3");
    try (PfsFileSystem fs = open(conf)) {
      assertTrue(fs.mkdirs(pfs("run/input/teragen")));
      assertTrue(fs.mkdirs(pfs("run/output/sorted")));
      assertTrue(fs.mkdirs(pfs("run/output/staging/job_1")));
      assertTrue(fs.mkdirs(pfs("run/history/done")));
      assertTrue(fs.mkdirs(pfs("run/inputs-are-not-input")));
    }
    assertEquals(List.of(tmp.resolve("run/input"), tmp.resolve("run/input/teragen"),
        tmp.resolve("run/output"), tmp.resolve("run/output/sorted"),
        tmp.resolve("run/output/staging"), tmp.resolve("run/output/staging/job_1")),
        RecordingLayout.APPLIED);
    StripeSettings input = new StripeSettings(2, 0, -1);
    StripeSettings output = new StripeSettings(8, MIB, -1);
    StripeSettings staging = new StripeSettings(0, 0, 3);
    assertEquals(List.of(input, input, output, output, staging, staging),
        RecordingLayout.APPLIED_SETTINGS);
  }

  @Test
  void aRoleWithoutAnAbsoluteDirectoryIsRefused() {
    Configuration conf = conf();
    conf.set(PfsConfigKeys.STRIPE_ROLES, "input");
    conf.set(PfsConfigKeys.roleKey("input", "count"), "2");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> open(conf));
    assertTrue(e.getMessage().contains("pfs.stripe.input.dir"), e.getMessage());
  }

  @Test
  void mkdirsAppliesNothingWhenNoStripeSettings() throws IOException {
    Configuration conf = conf();
    conf.set(PfsConfigKeys.LAYOUT, RecordingLayout.class.getName());
    try (PfsFileSystem fs = open(conf)) {
      assertTrue(fs.mkdirs(pfs("plain")));
      assertTrue(RecordingLayout.APPLIED.isEmpty());
    }
  }

  @Test
  void layoutChoice() {
    Configuration conf = new Configuration(false);
    assertInstanceOf(NoLayout.class, StripeLayout.fromConf(conf));
    conf.set(PfsConfigKeys.LAYOUT, "auto");
    assertInstanceOf(NoLayout.class, StripeLayout.fromConf(conf));
    conf.set(PfsConfigKeys.LAYOUT, "Lustre");
    assertInstanceOf(LustreLayout.class, StripeLayout.fromConf(conf));
    conf.set(PfsConfigKeys.LAYOUT, "orangefs");
    assertInstanceOf(OrangeFsLayout.class, StripeLayout.fromConf(conf));
    conf.set(PfsConfigKeys.LAYOUT, "gpfs");
    assertThrows(IllegalArgumentException.class, () -> StripeLayout.fromConf(conf));
  }

  @Test
  void writeReadAndListThroughFileSystemGet() throws IOException {
    Configuration conf = conf();
    FileSystem fs = FileSystem.get(URI.create("pfs:///"), conf);
    try {
      assertInstanceOf(PfsFileSystem.class, fs);
      assertEquals("pfs", fs.getScheme());
      Path dir = new Path(tmp.resolve("data").toString()); // scheme-less absolute path
      Path file = new Path(dir, "hello.txt");
      try (FSDataOutputStream out = fs.create(file)) {
        out.write("hello pfs".getBytes(StandardCharsets.UTF_8));
      }
      try (FSDataInputStream in = fs.open(file)) {
        assertEquals("hello pfs", new String(in.readAllBytes(), StandardCharsets.UTF_8));
      }
      assertEquals("hello pfs", Files.readString(tmp.resolve("data/hello.txt")));
      assertTrue(Files.notExists(tmp.resolve("data/.hello.txt.crc")), "raw: no checksum file");

      FileStatus[] ls = fs.listStatus(dir);
      assertEquals(1, ls.length);
      assertEquals("pfs:" + tmp.resolve("data/hello.txt"), ls[0].getPath().toString());
      assertEquals(9, ls[0].getLen());

      // owner/group/permission (MR checks them on the staging dir), for files and directories
      Files.setPosixFilePermissions(tmp.resolve("data"), PosixFilePermissions.fromString("rwx--x---"));
      FileStatus ds = fs.getFileStatus(dir);
      assertTrue(ds.isDirectory());
      assertEquals(new FsPermission((short) 0710), ds.getPermission());
      assertEquals(System.getProperty("user.name"), ds.getOwner());
      assertFalse(ds.getGroup().isEmpty());
      fs.setPermission(file, new FsPermission((short) 0640));
      assertEquals(new FsPermission((short) 0640), fs.getFileStatus(file).getPermission());
      assertEquals("pfs:" + tmp, fs.makeQualified(new Path(tmp.toString())).toString());
      assertTrue(fs.getWorkingDirectory().toString().startsWith("pfs:/"));
      assertThrows(IllegalArgumentException.class,
          () -> fs.getFileStatus(new Path("file://" + tmp)), "Wrong FS");

      assertTrue(fs.rename(file, new Path(dir, "renamed.txt")));
      assertTrue(fs.exists(new Path("pfs://" + tmp.resolve("data/renamed.txt"))));
      assertTrue(fs.delete(dir, true));
      assertTrue(Files.notExists(tmp.resolve("data")));
    } finally {
      fs.close();
    }
  }

  @Test
  void fileContextThroughPfsFs() throws IOException {
    FileContext fc = FileContext.getFileContext(URI.create("pfs:///"), conf());
    Path dir = new Path("pfs://" + tmp.resolve("fc"));
    fc.mkdir(dir, null, true);
    Path f = new Path(dir, "x");
    try (FSDataOutputStream out = fc.create(f, java.util.EnumSet.of(CreateFlag.CREATE))) {
      out.write(42);
    }
    FileStatus st = fc.getFileStatus(f);
    assertEquals(1, st.getLen());
    assertEquals("pfs:" + tmp.resolve("fc/x"), st.getPath().toString());
    assertEquals(1, fc.util().listStatus(dir).length);
  }
}
