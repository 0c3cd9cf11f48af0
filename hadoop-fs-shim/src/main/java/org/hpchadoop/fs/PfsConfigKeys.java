package org.hpchadoop.fs;

/**
 * Configuration keys of the {@code pfs://} shim (set them in {@code core-site.xml}).
 *
 * <p>All sizes are in bytes; Hadoop's size suffixes ({@code 64m}, {@code 1g}) are accepted.
 */
public final class PfsConfigKeys {
  /** URI scheme of the shim: {@code pfs:///path} is the local (shared, POSIX) path {@code /path}. */
  public static final String SCHEME = "pfs";

  /**
   * Explicit split size (bytes): when set, the block size of every file, which is what
   * FileInputFormat splits on, whatever the stripe size. Unset (the default): the block size is
   * derived from the stripe size, at least {@link #LOCAL_BLOCK_SIZE} (see {@link PfsFileSystem}).
   */
  public static final String SPLIT_SIZE = "pfs.split.size";
  /**
   * Hadoop's own local-filesystem block size key (bytes, Hadoop default 32 MiB): without
   * {@link #SPLIT_SIZE}, the least block size, and the block size when no stripe size is known.
   */
  public static final String LOCAL_BLOCK_SIZE = "fs.local.block.size";
  /** Hadoop's default of {@code fs.local.block.size}: 32 MiB. */
  public static final long DEFAULT_SPLIT_SIZE = 32L * 1024 * 1024;

  /**
   * Stripe layout implementation: {@code lustre}, {@code orangefs}, {@code none} or {@code auto}
   * (default; same as {@code none}), or the class name of a {@link StripeLayout} implementation.
   */
  public static final String LAYOUT = "pfs.layout";
  /**
   * Comma-separated role names ({@code input,output,staging,scratch}); for each,
   * {@code pfs.stripe.<role>.dir} (absolute) and the layout of the directories created in it:
   * {@code pfs.stripe.<role>.count} (0 or unset = leave unset, -1 = all targets on Lustre),
   * {@code .size} (bytes; 0 or unset = leave unset), {@code .index} (first storage target, Lustre
   * {@code -i}; -1 or unset = any). See {@link RoleLayouts}.
   */
  public static final String STRIPE_ROLES = "pfs.stripe.roles";

  /**
   * Comma-separated host names listed in every block location, so a task can run on any of them.
   * Default: {@code localhost} (YARN then treats every node as equally remote).
   */
  public static final String LOCALITY_HOSTS = "pfs.locality.hosts";

  /** Path of the Lustre {@code lfs} command. Default: {@code lfs} (looked up on PATH). */
  public static final String LFS_COMMAND = "pfs.lfs.command";

  /**
   * Time limit of one {@code lfs} run, in seconds (Hadoop time suffixes such as {@code 90s} or
   * {@code 2m} are accepted). Default: 60. A run still going then is killed and its lookup or
   * {@code setstripe} fails with an IOException.
   */
  public static final String LFS_TIMEOUT = "pfs.lfs.timeout";

  /**
   * @param role a role named in {@link #STRIPE_ROLES}
   * @param what {@code dir}, {@code count}, {@code size} or {@code index}
   * @return {@code pfs.stripe.<role>.<what>}
   */
  public static String roleKey(String role, String what) {
    return "pfs.stripe." + role + "." + what;
  }

  private PfsConfigKeys() {
  }
}
