package org.hpchadoop.fs;

import org.apache.hadoop.conf.Configuration;

/**
 * The stripe layout to apply to new directories of one role, from {@code pfs.stripe.<role>.count},
 * {@code pfs.stripe.<role>.size} (bytes) and {@code pfs.stripe.<role>.index} ({@link RoleLayouts}).
 *
 * @param count stripe count; 0 = not set, -1 = all storage targets
 * @param size stripe size in bytes; 0 = not set
 * @param index first storage target; -1 = any
 */
public record StripeSettings(int count, long size, int index) {

  /** Nothing configured: new directories keep the layout they inherit. */
  public static final StripeSettings UNSET = new StripeSettings(0, 0, -1);

  /**
   * Reads one role's settings from a configuration.
   *
   * @param conf Hadoop configuration
   * @param role a role named in {@code pfs.stripe.roles}
   * @return the settings; {@link #UNSET} when none of the role's keys is set
   */
  public static StripeSettings forRole(Configuration conf, String role) {
    return new StripeSettings(
        conf.getInt(PfsConfigKeys.roleKey(role, "count"), 0),
        conf.getLongBytes(PfsConfigKeys.roleKey(role, "size"), 0),
        conf.getInt(PfsConfigKeys.roleKey(role, "index"), -1));
  }

  /** @return true when no count, size or index is configured */
  public boolean isUnset() {
    return count == 0 && size <= 0 && index < 0;
  }
}
