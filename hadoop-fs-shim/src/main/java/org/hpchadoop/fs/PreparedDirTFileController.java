package org.hpchadoop.fs;

import java.io.FileNotFoundException;
import java.io.IOException;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.yarn.exceptions.YarnRuntimeException;
import org.apache.hadoop.yarn.logaggregation.filecontroller.tfile.LogAggregationTFileController;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Hadoop's TFile log-aggregation controller for a remote log directory that hpc-hadoop has already
 * made: it never sets the sticky bit there.
 *
 * <p>Before the first application of each NodeManager, Hadoop 3.4.2's {@code
 * LogAggregationFileController.verifyAndCreateRemoteLogDir} either creates {@code
 * yarn.nodemanager.remote-app-log-dir} with mode 1777 and {@code chmod}s it to 1777, or, when it
 * exists, creates {@code <dir>/<random>.permission_check} and {@code chmod}s that file to 1777 (to
 * learn whether the filesystem supports {@code chmod}). OrangeFS has no sticky bit: its client
 * refuses that {@code chmod} with EINVAL, logs a backtrace, and after 8 of them ({@code
 * GOSSIP_MAX_BT}) its FUSE client {@code pvfs2fuse} exits, taking every user's mount on the node
 * with it. hpc-hadoop makes {@code app-logs/} (mode 0700: a cluster directory belongs to one user,
 * the sticky bit protects nothing there) before any daemon starts, so this controller only checks
 * that the directory is there; aggregation itself (application directories 0770, log files 0640)
 * is Hadoop's. Where the directory does not exist (e.g. on HDFS), Hadoop's own check runs.
 *
 * <p>hpc-hadoop sets {@code yarn.log-aggregation.file-controller.TFile.class} to this class in
 * {@code yarn-site.xml}, so the NodeManagers, the JobHistoryServer and {@code yarn logs} use it.
 */
public class PreparedDirTFileController extends LogAggregationTFileController {
  private static final Logger LOG = LoggerFactory.getLogger(PreparedDirTFileController.class);

  /**
   * Checks that the remote log directory exists and is a directory, without any {@code chmod};
   * where it does not exist, Hadoop's own {@code verifyAndCreateRemoteLogDir} makes it.
   *
   * @throws YarnRuntimeException the directory cannot be read, or is not a directory
   */
  @Override
  public void verifyAndCreateRemoteLogDir() {
    Path dir = getRemoteRootLogDir();
    FileStatus status;
    try {
      FileSystem fs = getFileSystem(conf);
      status = fs.getFileStatus(dir);
    } catch (FileNotFoundException e) {
      LOG.info("Remote Root Log Dir [{}] does not exist: Hadoop's own check makes it", dir);
      super.verifyAndCreateRemoteLogDir();
      return;
    } catch (IOException e) {
      throw new YarnRuntimeException("Failed to check dir [" + dir + "]", e);
    }
    if (!status.isDirectory()) {
      throw new YarnRuntimeException("Remote Root Log Dir [" + dir + "] is not a directory");
    }
    LOG.debug("Remote Root Log Dir [{}] made by hpc-hadoop: no permission check", dir);
  }
}
