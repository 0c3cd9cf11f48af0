package org.hpchadoop.fs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataOutputStream;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.ChecksumException;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocalFileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.OutputCommitter;
import org.apache.hadoop.mapreduce.RecordWriter;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.lib.output.FileOutputFormat;
import org.apache.hadoop.mapreduce.lib.output.TextOutputFormat;
import org.apache.hadoop.mapreduce.task.JobContextImpl;
import org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link NoChecksumLocalFileSystem} as {@code fs.file.impl} in a real {@link Configuration}: no
 * {@code .crc} files written, none verified, {@code FileSystem.getLocal} still works.
 */
class NoChecksumLocalFileSystemTest {
  @TempDir
  java.nio.file.Path tmp;

  /** core-site as hpc-hadoop renders it; the cache is off so no other test's file:// leaks in. */
  private static Configuration conf() {
    Configuration conf = new Configuration();
    conf.set("fs.file.impl", NoChecksumLocalFileSystem.class.getName());
    conf.setBoolean("fs.file.impl.disable.cache", true);
    return conf;
  }

  private Path path(String child) {
    return new Path("file://" + tmp.resolve(child));
  }

  /** Every file under tmp whose name ends with .crc. */
  private List<String> crcFiles() throws IOException {
    try (Stream<java.nio.file.Path> s = Files.walk(tmp)) {
      return s.map(java.nio.file.Path::toString).filter(n -> n.endsWith(".crc"))
          .collect(Collectors.toList());
    }
  }

  private static void write(FileSystem fs, Path p, String text) throws IOException {
    try (FSDataOutputStream out = fs.create(p)) {
      out.write(text.getBytes(StandardCharsets.UTF_8));
    }
  }

  private static String read(FileSystem fs, Path p) throws IOException {
    try (FSDataInputStream in = fs.open(p)) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  @Test
  void getLocalReturnsTheShim() throws IOException {
    Configuration conf = conf();
    LocalFileSystem local = FileSystem.getLocal(conf);
    try {
      assertInstanceOf(NoChecksumLocalFileSystem.class, local);
      assertFalse(local.getVerifyChecksum());
      local.setVerifyChecksum(true); // as `hadoop fs -get` does: ignored
      assertFalse(local.getVerifyChecksum());
      assertEquals("file", local.getScheme());
      write(local, path("via-getlocal"), "x");
      assertEquals(List.of(), crcFiles());
    } finally {
      local.close();
    }
  }

  @Test
  void writeThroughFileSystemGetLeavesNoCrc() throws IOException {
    try (FileSystem fs = FileSystem.get(URI.create("file:///"), conf())) {
      assertInstanceOf(NoChecksumLocalFileSystem.class, fs);
      Path dir = path("out");
      assertTrue(fs.mkdirs(dir));
      Path f = new Path(dir, "part-r-00000");
      write(fs, f, "hello\n".repeat(10_000));
      assertEquals("hello\n".repeat(10_000), read(fs, f));
      assertEquals(List.of(), crcFiles());
      assertEquals(60_000, fs.getFileStatus(f).getLen());
      assertEquals(1, fs.listStatus(dir).length);
    }
  }

  @Test
  void plainLocalFileSystemWritesCrc() throws IOException {
    // the behaviour this class removes (and that filesystem.checksums: true keeps)
    Configuration conf = new Configuration();
    conf.setBoolean("fs.file.impl.disable.cache", true);
    try (FileSystem fs = FileSystem.get(URI.create("file:///"), conf)) {
      assertFalse(fs instanceof NoChecksumLocalFileSystem);
      write(fs, path("plain"), "x");
      assertEquals(List.of(tmp.resolve(".plain.crc").toString()), crcFiles());
    }
  }

  /** Writes a well-formed .crc (header, 512 bytes per checksum) whose checksum is wrong. */
  private void staleCrc(String name) throws IOException {
    try (DataOutputStream out = new DataOutputStream(
        Files.newOutputStream(tmp.resolve("." + name + ".crc")))) {
      out.write(new byte[] {'c', 'r', 'c', 0});
      out.writeInt(512);
      out.writeInt(0xdeadbeef);
    }
  }

  @Test
  void staleCrcIsNotVerifiedAndIsHidden() throws IOException {
    Files.writeString(tmp.resolve("data"), "fresh content");
    staleCrc("data");
    Configuration checking = new Configuration();
    checking.setBoolean("fs.file.impl.disable.cache", true);
    try (FileSystem plain = FileSystem.get(URI.create("file:///"), checking)) {
      assertThrows(ChecksumException.class, () -> read(plain, path("data")), "test is meaningful");
    }
    try (FileSystem fs = FileSystem.get(URI.create("file:///"), conf())) {
      fs.setVerifyChecksum(true); // ignored
      assertEquals("fresh content", read(fs, path("data")));
      FileStatus[] ls = fs.listStatus(path(""));
      assertEquals(1, ls.length, "the .crc is not listed");
      assertEquals("data", ls[0].getPath().getName());
      // overwriting removes the stale checksum, so a checksumming reader cannot trip on it later
      write(fs, path("data"), "rewritten");
      assertEquals(List.of(), crcFiles());
    }
  }

  @Test
  void renameAndDeleteNeedNoCrc() throws IOException {
    try (FileSystem fs = FileSystem.get(URI.create("file:///"), conf())) {
      write(fs, path("a"), "a");
      assertTrue(fs.rename(path("a"), path("b")));
      assertEquals("a", read(fs, path("b")));
      assertTrue(fs.delete(path("b"), false));
      assertFalse(fs.exists(path("b")));
      Files.writeString(tmp.resolve("c"), "c"); // a stale .crc is carried along, not left behind
      staleCrc("c");
      assertTrue(fs.rename(path("c"), path("d")));
      assertTrue(Files.exists(tmp.resolve(".d.crc")));
      assertTrue(fs.delete(path("d"), false));
      assertEquals(List.of(), crcFiles());
      try (Stream<java.nio.file.Path> s = Files.list(tmp)) {
        assertEquals(0, s.count());
      }
    }
  }

  @Test
  void textOutputFormatCommitLeavesNoCrc() throws Exception {
    Configuration conf = conf();
    Job job = Job.getInstance(conf);
    Path out = path("wordcount-out");
    FileOutputFormat.setOutputPath(job, out);
    JobContext jc = new JobContextImpl(job.getConfiguration(), job.getJobID());
    TaskAttemptContext tc = new TaskAttemptContextImpl(job.getConfiguration(),
        new TaskAttemptID("local", 1, TaskType.REDUCE, 0, 0));
    TextOutputFormat<Text, LongWritable> format = new TextOutputFormat<>();
    OutputCommitter committer = format.getOutputCommitter(tc);
    committer.setupJob(jc);
    committer.setupTask(tc);
    RecordWriter<Text, LongWritable> w = format.getRecordWriter(tc);
    for (int i = 0; i < 1000; i++) {
      w.write(new Text("word" + i), new LongWritable(i));
    }
    w.close(tc);
    assertTrue(committer.needsTaskCommit(tc));
    committer.commitTask(tc); // rename of the attempt's files
    committer.commitJob(jc); // rename into place, _SUCCESS
    assertTrue(Files.exists(tmp.resolve("wordcount-out/part-r-00000")));
    assertTrue(Files.exists(tmp.resolve("wordcount-out/_SUCCESS")));
    assertEquals(List.of(), crcFiles());
  }

  /**
   * Issue 36 item 5: the job client's explicit 0644 on a submission's files ({@code
   * JobSubmissionFiles.JOB_FILE_PERMISSION}, set through {@code FileSystem.create(fs, path, perm)})
   * keeps hpc-hadoop's umask 077; a mode without group or other bits is set as asked.
   */
  @Test
  void explicitModesKeepTheConfiguredUmask() throws IOException {
    Configuration conf = conf();
    conf.set("fs.permissions.umask-mode", "077");
    try (FileSystem fs = FileSystem.get(URI.create("file:///"), conf)) {
      Path jar = path("job.jar");
      FileSystem.create(fs, jar, new org.apache.hadoop.fs.permission.FsPermission((short) 0644)).close();
      assertEquals(java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"),
          Files.getPosixFilePermissions(tmp.resolve("job.jar")));
      assertEquals(0600, fs.getFileStatus(jar).getPermission().toShort());
      fs.setPermission(jar, new org.apache.hadoop.fs.permission.FsPermission((short) 0500));
      assertEquals(0500, fs.getFileStatus(jar).getPermission().toShort());
    }
    Configuration checksums = new Configuration();
    checksums.set("fs.file.impl", PrivateLocalFileSystem.class.getName());
    checksums.setBoolean("fs.file.impl.disable.cache", true);
    checksums.set("fs.permissions.umask-mode", "077");
    try (FileSystem fs = FileSystem.get(URI.create("file:///"), checksums)) {
      Path xml = path("job.xml");
      FileSystem.create(fs, xml, new org.apache.hadoop.fs.permission.FsPermission((short) 0644)).close();
      assertEquals(0600, fs.getFileStatus(xml).getPermission().toShort());
    }
  }
}
