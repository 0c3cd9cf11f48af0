package org.hpchadoop.fs;

import java.io.IOException;
import java.net.URI;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocalFileSystem;

/**
 * Hadoop's {@code file://} filesystem without {@code .crc} side files: a {@link LocalFileSystem}
 * (so {@code FileSystem.getLocal(conf)}, which casts to {@code LocalFileSystem}, keeps working)
 * that neither writes nor verifies checksums.
 *
 * <p>Hadoop's {@code LocalFileSystem} writes a hidden {@code .NAME.crc} file beside every file it
 * creates (4 bytes of CRC per {@code file.bytes-per-checksum} = 512 bytes of data, e.g. 68 KB for
 * a 8.5 MB {@code part-r-00000}). On a parallel filesystem that doubles the number of files the
 * metadata server handles, for integrity checking the parallel filesystem already does. Setting
 * {@code fs.file.impl} to {@code RawLocalFileSystem} instead breaks {@code FileSystem.getLocal}
 * (ClassCastException), hence this subclass. hpc-hadoop sets
 * {@code fs.file.impl=org.hpchadoop.fs.NoChecksumLocalFileSystem} in {@code core-site.xml} unless
 * the job file says {@code filesystem.checksums: true}.
 *
 * <p>Behaviour, all inherited from {@code ChecksumFileSystem} with writing and verification off:
 * <ul>
 *   <li>{@code create} writes the file only, and deletes a stale {@code .crc} of the same name
 *       (left by an earlier checksumming writer) so that it cannot mismatch later;</li>
 *   <li>{@code open} reads the raw file: an existing {@code .crc}, even a wrong one, is ignored;</li>
 *   <li>{@code rename} and {@code delete} move or remove a {@code .crc} only if one exists;</li>
 *   <li>{@code listStatus} and the listing iterators hide {@code .crc} files, as Hadoop's does.</li>
 * </ul>
 * {@link #setVerifyChecksum(boolean)} and {@link #setWriteChecksum(boolean)} are ignored (some
 * clients, e.g. {@code hadoop fs -get}, turn verification on explicitly). Appending stays
 * unsupported, as in {@code LocalFileSystem}. Explicit permissions keep the configured umask, as in
 * {@link PrivateLocalFileSystem}.
 */
public class NoChecksumLocalFileSystem extends PrivateLocalFileSystem {

  /** Over a new {@code RawLocalFileSystem}; what {@code FileSystem.get} instantiates. */
  public NoChecksumLocalFileSystem() {
    super();
    disableChecksums();
  }

  /**
   * @param rawLocalFileSystem the raw local filesystem to wrap
   */
  public NoChecksumLocalFileSystem(FileSystem rawLocalFileSystem) {
    super(rawLocalFileSystem);
    disableChecksums();
  }

  /**
   * Initializes as {@code LocalFileSystem} (which reads {@code fs.file.checksum.verify}), then
   * turns checksum writing and verification off whatever the configuration says.
   *
   * @throws IOException when the raw local filesystem cannot be initialized
   */
  @Override
  public void initialize(URI name, Configuration conf) throws IOException {
    super.initialize(name, conf);
    disableChecksums();
  }

  private void disableChecksums() {
    super.setVerifyChecksum(false);
    super.setWriteChecksum(false);
  }

  /** Ignored: this filesystem never verifies checksums. */
  @Override
  public void setVerifyChecksum(boolean verifyChecksum) {
    // never verify
  }

  /** Ignored: this filesystem never writes checksums. */
  @Override
  public void setWriteChecksum(boolean writeChecksum) {
    // never write
  }

  /** @return always false */
  @Override
  public boolean getVerifyChecksum() {
    return false;
  }
}
