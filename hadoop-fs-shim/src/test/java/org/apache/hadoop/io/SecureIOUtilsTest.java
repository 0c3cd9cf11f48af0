package org.apache.hadoop.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

import org.apache.hadoop.fs.FSDataInputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The pure-Java SecureIOUtils: the owner check of Hadoop's, with no native code. */
class SecureIOUtilsTest {
  @TempDir
  Path dir;

  private File file(String text) throws IOException {
    Path path = dir.resolve("map.out");
    Files.writeString(path, text, StandardCharsets.UTF_8);
    return path.toFile();
  }

  @Test
  void opensAFileOfTheExpectedOwnerAndRefusesAnyOther() throws IOException {
    File f = file("abc");
    String me = Files.getOwner(f.toPath()).getName();
    try (FileInputStream in = SecureIOUtils.forceSecureOpenForRead(f, me, null)) {
      assertEquals('a', in.read());
    }
    try (RandomAccessFile raf = SecureIOUtils.forceSecureOpenForRandomRead(f, "r", me, null)) {
      assertEquals(3, raf.length());
    }
    try (FSDataInputStream in = SecureIOUtils.forceSecureOpenFSDataInputStream(f, me, null)) {
      assertEquals('a', in.read());
    }
    IOException refused = assertThrows(IOException.class,
        () -> SecureIOUtils.forceSecureOpenForRead(f, "hhmallory-not-the-owner", null));
    assertEquals("Owner '" + me + "' for path " + f + " did not match expected owner 'hhmallory-not-the-owner'",
        refused.getMessage());
    assertThrows(IOException.class, () -> SecureIOUtils.forceSecureOpenForRandomRead(f, "r", "nobody-else", null));
    assertThrows(IOException.class, () -> SecureIOUtils.forceSecureOpenFSDataInputStream(f, "nobody-else", null));
  }

  @Test
  void aLinkIsCheckedByTheFileItNames() throws IOException {
    // As Hadoop's fstat of the opened descriptor: the owner checked is the target's, not the link's.
    File target = file("secret");
    Path link = dir.resolve("link");
    Files.createSymbolicLink(link, target.toPath());
    String me = Files.getOwner(target.toPath()).getName();
    try (FileInputStream in = SecureIOUtils.forceSecureOpenForRead(link.toFile(), me, null)) {
      assertEquals('s', in.read());
    }
  }

  @Test
  void createForWriteMakesANewFileWithExactlyTheModeAsked() throws IOException {
    File f = dir.resolve("index").toFile();
    try (FileOutputStream out = SecureIOUtils.createForWrite(f, 0640)) {
      out.write(1);
    }
    assertEquals("rw-r-----", PosixFilePermissions.toString(Files.getPosixFilePermissions(f.toPath())));
    assertThrows(SecureIOUtils.AlreadyExistsException.class, () -> SecureIOUtils.createForWrite(f, 0600));
    assertTrue(f.length() == 1);
  }
}
