package org.hpchadoop.fs;

import org.apache.hadoop.conf.Configuration;

/**
 * The stripe layout to apply to new directories, from {@code pfs.stripe.count},
 * {@code pfs.stripe.size} (bytes) and {@code pfs.stripe.index}.
 *
 * @param count stripe count; 0 = not set, -1 = all storage targets
 * @param size stripe size in bytes; 0 = not set
 * @param index first storage target; -1 = any
 */
public record StripeSettings(int count, long size, int index) {

  /** Nothing configured: new directories keep the layout they inherit. */
  public static final StripeSettings UNSET = new StripeSettings(0, 0, -1);

  /**
   * Reads the settings from a configuration.
   *
   * @param conf Hadoop configuration
   * @return the settings; {@link #UNSET} when no key is set
   */
  public static StripeSettings from(Configuration conf) {
    return new StripeSettings(
        conf.getInt(PfsConfigKeys.STRIPE_COUNT, 0),
        conf.getLongBytes(PfsConfigKeys.STRIPE_SIZE, 0),
        conf.getInt(PfsConfigKeys.STRIPE_INDEX, -1));
  }

  /** @return true when no count, size or index is configured */
  public boolean isUnset() {
    return count == 0 && size <= 0 && index < 0;
  }
}
