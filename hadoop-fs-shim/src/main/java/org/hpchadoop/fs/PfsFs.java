package org.hpchadoop.fs;

import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.DelegateToFileSystem;

/**
 * The {@code AbstractFileSystem} (FileContext API) for {@code pfs://}, delegating to
 * {@link PfsFileSystem}. YARN and MapReduce (job submission, localization, history) use
 * FileContext, so set {@code fs.AbstractFileSystem.pfs.impl=org.hpchadoop.fs.PfsFs}.
 */
public class PfsFs extends DelegateToFileSystem {

  /**
   * Called by {@code AbstractFileSystem.createFileSystem}.
   *
   * @param theUri a {@code pfs:} URI
   * @param conf Hadoop configuration
   * @throws IOException if the file system cannot be initialized
   * @throws URISyntaxException if the URI is not a {@code pfs:} URI
   */
  public PfsFs(URI theUri, Configuration conf) throws IOException, URISyntaxException {
    super(theUri, new PfsFileSystem(), conf, PfsConfigKeys.SCHEME, false);
  }

  @Override
  public int getUriDefaultPort() {
    return -1;
  }

  @Override
  public boolean isValidName(String src) {
    return true; // let the OS decide, as RawLocalFs does
  }
}
