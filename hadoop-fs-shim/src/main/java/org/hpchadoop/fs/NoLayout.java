package org.hpchadoop.fs;

import java.nio.file.Path;
import java.util.OptionalLong;

/**
 * Striping does not apply (NFS, GPFS, BeeGFS without tooling, a local disk): the block size is
 * always {@code pfs.split.size}, else {@code fs.local.block.size} (Hadoop default 32 MiB), and
 * configured stripe settings are reported as not applicable.
 */
public final class NoLayout implements StripeLayout {
  /** The only instance. */
  public static final NoLayout INSTANCE = new NoLayout();

  private NoLayout() {
  }

  @Override
  public OptionalLong stripeSize(Path path) {
    return OptionalLong.empty();
  }

  @Override
  public void apply(Path dir, StripeSettings settings) {
    // not applicable; PfsFileSystem warns once at initialization
  }

  @Override
  public boolean isApplicable() {
    return false;
  }

  @Override
  public String toString() {
    return "none";
  }
}
