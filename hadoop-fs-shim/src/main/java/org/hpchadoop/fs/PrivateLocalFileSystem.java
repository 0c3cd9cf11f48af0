package org.hpchadoop.fs;

import java.io.IOException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocalFileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.permission.FsPermission;

/**
 * Hadoop's {@code file://} filesystem whose explicit permissions keep the configured umask: every
 * {@link #setPermission(Path, FsPermission)} applies {@code fs.permissions.umask-mode} (hpc-hadoop
 * sets {@code 077}) to the mode asked for.
 *
 * <p>Why (issue 36 item 5): Hadoop's job client makes the files of a submission, {@code
 * staging/<user>/.staging/job_*}{@code /job.jar}, {@code job.xml}, {@code job.split}, with the
 * explicit mode {@code JobSubmissionFiles.JOB_FILE_PERMISSION} (0644) whatever the umask: {@code
 * FileSystem.create(fs, path, permission)} and {@code copyJar} call {@code setPermission} after the
 * file is written. A file of the owner's job is then readable by anyone who gets past its directory,
 * which a shared FUSE mount's cached permission answers allow (real OrangeFS). With this class, such
 * a file is 0600 under umask 077; a mode without group or other bits is unchanged.
 *
 * <p>{@code hpc-hadoop} sets {@code fs.file.impl} to this class when the job file says {@code
 * filesystem.checksums: true}, else to {@link NoChecksumLocalFileSystem}, which extends it.
 */
public class PrivateLocalFileSystem extends LocalFileSystem {

  /** Over a new {@code RawLocalFileSystem}; what {@code FileSystem.get} instantiates. */
  public PrivateLocalFileSystem() {
    super();
  }

  /**
   * @param rawLocalFileSystem the raw local filesystem to wrap
   */
  public PrivateLocalFileSystem(FileSystem rawLocalFileSystem) {
    super(rawLocalFileSystem);
  }

  /**
   * Sets {@code permission} less the configured umask ({@code fs.permissions.umask-mode}).
   *
   * @throws IOException when the permission cannot be set
   */
  @Override
  public void setPermission(Path p, FsPermission permission) throws IOException {
    super.setPermission(p, masked(permission, getConf()));
  }

  /**
   * {@code permission} less {@code conf}'s umask ({@code fs.permissions.umask-mode}, Hadoop's
   * default 022 when unset); {@code permission} itself when there is no configuration.
   *
   * @param permission the mode a caller asks for
   * @param conf the filesystem's configuration, or {@code null}
   * @return the mode to set
   */
  public static FsPermission masked(FsPermission permission, Configuration conf) {
    return conf == null || permission == null
        ? permission
        : permission.applyUMask(FsPermission.getUMask(conf));
  }
}
