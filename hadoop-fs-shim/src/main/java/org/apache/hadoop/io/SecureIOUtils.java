/*
 * Licensed under the Apache License, Version 2.0: a pure-Java replacement of Hadoop 3.4.2's
 * org.apache.hadoop.io.SecureIOUtils (hadoop-common), same public API.
 */
package org.apache.hadoop.io;

import java.io.File;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashSet;
import java.util.Set;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.security.UserGroupInformation;

/**
 * Opens files after checking who owns them, as Hadoop's own {@code SecureIOUtils}, in pure Java.
 *
 * <p>Hadoop's class refuses to load in secure mode ({@code hadoop.security.authentication=kerberos}) without
 * {@code libhadoop.so} ("Secure IO is not possible without native code extensions"), which a runtime from Maven
 * Central does not have: the NodeManager's ShuffleHandler (map outputs and their index), its log aggregation and its
 * container-log pages, and a reducer's reading of spill indexes all go through it, so a secure NodeManager died at its
 * first log aggregation (issue 27). hpc-hadoop's runtime puts this class first on every classpath (the runtime's
 * {@code first/} directory). The check is the same: the file's owner must be the expected owner, or
 * {@link IOException} "Owner 'x' for path p did not match expected owner 'y'"; the group is not checked (nor is it by
 * Hadoop's). Where Hadoop reads the owner with {@code fstat} of the descriptor it opened, Java cannot: this class reads
 * the attributes of the file the path names (links followed, as the open does) before and after the open, and
 * refuses it unless both are the same file (device and inode) with the expected owner; a swap of the file between
 * the two reads and back is not seen, which only someone who may write the owner's 0700 directories can do. Outside secure mode it opens files as Hadoop's does, unchecked.
 */
public class SecureIOUtils {
  private static final FileSystem RAW;

  static {
    try {
      RAW = FileSystem.getLocal(new Configuration()).getRaw();
    } catch (IOException e) {
      throw new RuntimeException("Couldn't obtain an instance of RawLocalFileSystem.", e);
    }
  }

  public SecureIOUtils() {
  }

  /** Open {@code f} for random read as {@code mode}, checking its owner in secure mode. */
  public static RandomAccessFile openForRandomRead(File f, String mode, String expectedOwner, String expectedGroup)
      throws IOException {
    if (!UserGroupInformation.isSecurityEnabled()) {
      return new RandomAccessFile(f, mode);
    }
    return forceSecureOpenForRandomRead(f, mode, expectedOwner, expectedGroup);
  }

  protected static RandomAccessFile forceSecureOpenForRandomRead(File f, String mode, String expectedOwner,
      String expectedGroup) throws IOException {
    PosixFileAttributes before = attributes(f);
    RandomAccessFile raf = new RandomAccessFile(f, mode);
    boolean success = false;
    try {
      check(f, before, expectedOwner);
      success = true;
      return raf;
    } finally {
      if (!success) {
        raf.close();
      }
    }
  }

  /** Open {@code file} on the raw local filesystem, checking its owner in secure mode. */
  public static FSDataInputStream openFSDataInputStream(File file, String expectedOwner, String expectedGroup)
      throws IOException {
    if (!UserGroupInformation.isSecurityEnabled()) {
      return RAW.open(new org.apache.hadoop.fs.Path(file.getAbsolutePath()));
    }
    return forceSecureOpenFSDataInputStream(file, expectedOwner, expectedGroup);
  }

  protected static FSDataInputStream forceSecureOpenFSDataInputStream(File file, String expectedOwner,
      String expectedGroup) throws IOException {
    PosixFileAttributes before = attributes(file);
    FSDataInputStream in = RAW.open(new org.apache.hadoop.fs.Path(file.getAbsolutePath()));
    boolean success = false;
    try {
      check(file, before, expectedOwner);
      success = true;
      return in;
    } finally {
      if (!success) {
        in.close();
      }
    }
  }

  /** Open {@code f} for read, checking its owner in secure mode. */
  public static FileInputStream openForRead(File f, String expectedOwner, String expectedGroup) throws IOException {
    if (!UserGroupInformation.isSecurityEnabled()) {
      return new FileInputStream(f);
    }
    return forceSecureOpenForRead(f, expectedOwner, expectedGroup);
  }

  protected static FileInputStream forceSecureOpenForRead(File f, String expectedOwner, String expectedGroup)
      throws IOException {
    PosixFileAttributes before = attributes(f);
    FileInputStream fis = new FileInputStream(f);
    boolean success = false;
    try {
      check(f, before, expectedOwner);
      success = true;
      return fis;
    } finally {
      if (!success) {
        fis.close();
      }
    }
  }

  /**
   * Create {@code f} for write with {@code permissions} (e.g. 0644), failing with {@link AlreadyExistsException} if
   * it exists: created at once with its mode (O_CREAT|O_EXCL), as Hadoop's secure path does.
   */
  public static FileOutputStream createForWrite(File f, int permissions) throws IOException {
    try {
      Files.createFile(f.toPath(), PosixFilePermissions.asFileAttribute(permissions(permissions)));
    } catch (FileAlreadyExistsException e) {
      throw new AlreadyExistsException(e);
    }
    // The umask may have narrowed the mode given at creation: set it exactly, as Hadoop's setPermission does.
    Files.setPosixFilePermissions(f.toPath(), permissions(permissions));
    return new FileOutputStream(f);
  }

  static Set<PosixFilePermission> permissions(int mode) {
    PosixFilePermission[] order = {
        PosixFilePermission.OTHERS_EXECUTE, PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_READ,
        PosixFilePermission.GROUP_EXECUTE, PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_READ,
        PosixFilePermission.OWNER_EXECUTE, PosixFilePermission.OWNER_WRITE, PosixFilePermission.OWNER_READ};
    Set<PosixFilePermission> out = new HashSet<>();
    for (int bit = 0; bit < order.length; bit++) {
      if ((mode & (1 << bit)) != 0) {
        out.add(order[bit]);
      }
    }
    return out;
  }

  private static PosixFileAttributes attributes(File f) throws IOException {
    return Files.readAttributes(f.toPath(), PosixFileAttributes.class);
  }

  /** The file opened must be the one read {@code before} (same device and inode) and be owned as expected. */
  private static void check(File f, PosixFileAttributes before, String expectedOwner) throws IOException {
    PosixFileAttributes after = attributes(f);
    Object key = before.fileKey();
    if (key == null || !key.equals(after.fileKey())) {
      throw new IOException("Path " + f + " changed while it was opened");
    }
    String owner = after.owner().getName();
    if (expectedOwner != null && !expectedOwner.equals(owner)) {
      throw new IOException("Owner '" + owner + "' for path " + f + " did not match expected owner '"
          + expectedOwner + "'");
    }
  }

  /** Signals that an attempt to create a file at a given pathname has failed because another file already existed
   * at that path. */
  public static class AlreadyExistsException extends IOException {
    private static final long serialVersionUID = 1L;

    public AlreadyExistsException(String msg) {
      super(msg);
    }

    public AlreadyExistsException(Throwable cause) {
      super(cause);
    }
  }
}
