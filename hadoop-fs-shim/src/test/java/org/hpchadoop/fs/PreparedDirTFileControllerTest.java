package org.hpchadoop.fs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.LocalFileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.yarn.exceptions.YarnRuntimeException;
import org.apache.hadoop.yarn.logaggregation.filecontroller.LogAggregationFileController;
import org.apache.hadoop.yarn.logaggregation.filecontroller.tfile.LogAggregationTFileController;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link PreparedDirTFileController}: on a remote log directory that exists, no {@code chmod} at
 * all (Hadoop's own controller {@code chmod}s a {@code .permission_check} file to 1777, which
 * OrangeFS refuses, and its client exits after 8 refusals).
 */
class PreparedDirTFileControllerTest {
  @TempDir
  java.nio.file.Path tmp;

  /** Every {@code setPermission} made through {@code file://}, as "path mode". */
  static final List<String> CHMODS = new ArrayList<>();

  /** {@code file://} that records each {@code setPermission} (and makes it). */
  public static class RecordingLocalFileSystem extends LocalFileSystem {
    @Override
    public void setPermission(Path p, FsPermission permission) throws IOException {
      CHMODS.add(p.getName() + " " + String.format("%04o", permission.toShort()));
      super.setPermission(p, permission);
    }
  }

  private Configuration conf(java.nio.file.Path remote) {
    Configuration conf = new Configuration();
    conf.set("fs.file.impl", RecordingLocalFileSystem.class.getName());
    conf.setBoolean("fs.file.impl.disable.cache", true);
    conf.set("yarn.nodemanager.remote-app-log-dir", "file://" + remote);
    return conf;
  }

  private void verify(LogAggregationFileController controller, java.nio.file.Path remote) {
    CHMODS.clear();
    controller.initialize(conf(remote), "TFile");
    controller.verifyAndCreateRemoteLogDir();
  }

  @Test
  void anExistingDirectoryIsNeitherChmoddedNorProbed() throws IOException {
    java.nio.file.Path remote = Files.createDirectory(tmp.resolve("app-logs"));
    verify(new PreparedDirTFileController(), remote);
    assertEquals(List.of(), CHMODS);
    try (Stream<java.nio.file.Path> left = Files.list(remote)) {
      assertEquals(0, left.count());
    }
  }

  @Test
  void hadoopsOwnControllerChmodsAProbeFileTo1777() throws IOException {
    // What the class above replaces (and why): the check this test sees is the refused chmod.
    java.nio.file.Path remote = Files.createDirectory(tmp.resolve("app-logs-hadoop"));
    verify(new LogAggregationTFileController(), remote);
    assertEquals(1, CHMODS.size(), CHMODS.toString());
    assertTrue(CHMODS.get(0).endsWith(".permission_check 1777"), CHMODS.toString());
  }

  @Test
  void aMissingDirectoryIsMadeByHadoopsOwnCheck() {
    java.nio.file.Path remote = tmp.resolve("missing");
    verify(new PreparedDirTFileController(), remote);
    assertTrue(Files.isDirectory(remote));
    assertEquals(List.of("missing 1777"), CHMODS);
  }

  @Test
  void aFileInsteadOfTheDirectoryIsAnError() throws IOException {
    java.nio.file.Path remote = Files.writeString(tmp.resolve("a-file"), "x");
    PreparedDirTFileController controller = new PreparedDirTFileController();
    controller.initialize(conf(remote), "TFile");
    assertThrows(YarnRuntimeException.class, controller::verifyAndCreateRemoteLogDir);
  }
}
