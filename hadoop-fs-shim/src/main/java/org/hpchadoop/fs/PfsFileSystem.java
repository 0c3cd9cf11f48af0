package org.hpchadoop.fs;

import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.util.Arrays;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.BlockLocation;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.permission.FsPermission;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Hadoop {@code FileSystem} for POSIX parallel filesystems (Lustre, OrangeFS, GPFS, BeeGFS, NFS)
 * mounted at the same path on every node: {@code pfs:///path} is the local path {@code /path}.
 *
 * <p>It is {@link RawLocalFileSystem} (no {@code .crc} side files: the parallel filesystem keeps
 * data integrity) under its own scheme, with three differences:
 * <ul>
 *   <li><b>Block size</b> ({@link #getDefaultBlockSize(Path)}, {@link FileStatus#getBlockSize()}),
 *       which FileInputFormat splits on, in bytes:
 *       <ol>
 *         <li>{@code pfs.split.size} when it is set (hpc-hadoop renders it from the job file's
 *             {@code filesystem.split_size}): an explicit split size always wins;</li>
 *         <li>else, when the {@link StripeLayout} knows the stripe size of the file's directory,
 *             the smallest multiple of the stripe size that is at least the floor
 *             {@code fs.local.block.size} (Hadoop default 32 MiB), so splits stay stripe-aligned
 *             without being tiny: a 1 MiB stripe (Lustre's default) gives 32 MiB, a 3 MiB stripe
 *             33 MiB, a 64 MiB stripe 64 MiB ({@link #alignedBlockSize});</li>
 *         <li>else the floor {@code fs.local.block.size} (32 MiB by default).</li>
 *       </ol>
 *       Stripe sizes are cached per directory, so {@code lfs} runs once per directory.</li>
 *   <li><b>New directories</b> created by {@code mkdirs} get the layout of the role whose
 *       directory contains them ({@link RoleLayouts}: {@code pfs.stripe.roles} and
 *       {@code pfs.stripe.<role>.dir|count|size|index}): a directory under the input directory
 *       gets the input layout, one under the output directory the output layout; one outside
 *       every role's directory gets none. Files inherit their directory's layout. Existing
 *       directories are never restriped.</li>
 *   <li><b>Block locations</b>: one per block, each naming every host of
 *       {@code pfs.locality.hosts} (default {@code localhost}), so a map can run anywhere.</li>
 * </ul>
 *
 * <p>Select it in {@code core-site.xml} with {@code fs.pfs.impl=org.hpchadoop.fs.PfsFileSystem}
 * and {@code fs.AbstractFileSystem.pfs.impl=org.hpchadoop.fs.PfsFs}. Configuration keys:
 * {@link PfsConfigKeys}.
 */
public class PfsFileSystem extends RawLocalFileSystem {
  private static final Logger LOG = LoggerFactory.getLogger(PfsFileSystem.class);
  private static final URI NAME = URI.create(PfsConfigKeys.SCHEME + ":///");
  private static final int MAX_CACHED_DIRS = 10_000;
  private static final long UNKNOWN = -1;

  private volatile boolean ready;
  /** {@code pfs.split.size} when set, else the floor {@code fs.local.block.size}. */
  private long splitSize = PfsConfigKeys.DEFAULT_SPLIT_SIZE;
  /** True when {@code pfs.split.size} is set: it then wins over stripe sizes. */
  private boolean explicitSplitSize;
  /** {@code fs.local.block.size} (default 32 MiB): the least block size derived from a stripe. */
  private long minBlockSize = PfsConfigKeys.DEFAULT_SPLIT_SIZE;
  private StripeLayout layout = NoLayout.INSTANCE;
  private RoleLayouts roles = RoleLayouts.NONE;
  private String[] hosts = {"localhost"};
  private final Map<String, Long> stripeCache = new ConcurrentHashMap<>();

  @Override
  public String getScheme() {
    return PfsConfigKeys.SCHEME;
  }

  @Override
  public URI getUri() {
    return NAME;
  }

  /**
   * Reads the configuration ({@link PfsConfigKeys}).
   *
   * @throws IllegalArgumentException when {@code pfs.split.size} or {@code fs.local.block.size}
   *     is not positive, {@code pfs.layout} names no layout, or a role has no absolute directory
   * @throws IOException when the underlying local filesystem cannot be initialized
   */
  @Override
  public void initialize(URI uri, Configuration conf) throws IOException {
    minBlockSize = conf.getLongBytes(PfsConfigKeys.LOCAL_BLOCK_SIZE, PfsConfigKeys.DEFAULT_SPLIT_SIZE);
    if (minBlockSize <= 0) {
      throw new IllegalArgumentException(
          PfsConfigKeys.LOCAL_BLOCK_SIZE + " must be > 0: " + minBlockSize);
    }
    explicitSplitSize = conf.getTrimmed(PfsConfigKeys.SPLIT_SIZE, "").length() > 0;
    splitSize = conf.getLongBytes(PfsConfigKeys.SPLIT_SIZE, minBlockSize);
    if (splitSize <= 0) {
      throw new IllegalArgumentException(PfsConfigKeys.SPLIT_SIZE + " must be > 0: " + splitSize);
    }
    layout = StripeLayout.fromConf(conf);
    roles = RoleLayouts.from(conf);
    String[] h = conf.getTrimmedStrings(PfsConfigKeys.LOCALITY_HOSTS);
    hosts = h.length > 0 ? h : new String[] {"localhost"};
    if (!layout.isApplicable() && !roles.isEmpty()) {
      LOG.warn("pfs.stripe.* is set ({}) but {}={}: striping not applicable, not applied",
          roles, PfsConfigKeys.LAYOUT, conf.get(PfsConfigKeys.LAYOUT, "auto"));
    }
    super.initialize(uri, conf);
    ready = true;
  }

  /**
   * @return the block size in bytes when no stripe size is known: {@code pfs.split.size} when set
   *     (then also when one is known), else {@code fs.local.block.size} (Hadoop default 32 MiB)
   */
  public long getSplitSize() {
    return splitSize;
  }

  /** @return true when {@code pfs.split.size} is set, so stripe sizes do not change block sizes */
  public boolean isSplitSizeExplicit() {
    return explicitSplitSize;
  }

  /**
   * The block size derived from a stripe size: the smallest multiple of {@code stripe} that is
   * at least {@code floor}, so that splits are stripe-aligned and not smaller than the floor.
   *
   * @param stripe stripe size in bytes, &gt; 0
   * @param floor least block size in bytes, &gt; 0 (the shim uses {@code fs.local.block.size},
   *     Hadoop default 32 MiB)
   * @return the block size in bytes: {@code stripe} itself when {@code stripe >= floor}
   * @throws IllegalArgumentException when {@code stripe} or {@code floor} is not positive
   */
  public static long alignedBlockSize(long stripe, long floor) {
    if (stripe <= 0 || floor <= 0) {
      throw new IllegalArgumentException("stripe and floor must be > 0: " + stripe + ", " + floor);
    }
    long multiples = (floor + stripe - 1) / stripe; // ceil(floor / stripe), no overflow: floor < 2^63
    return Math.multiplyExact(multiples, stripe);
  }

  /** @return the stripe layout in use */
  public StripeLayout getLayout() {
    return layout;
  }

  @Override
  @Deprecated
  public long getDefaultBlockSize() {
    return splitSize;
  }

  /**
   * The block size of {@code f} by the rule of the class comment.
   *
   * @param f a file or directory (need not exist)
   * @return in bytes: {@code pfs.split.size} when set; else the stripe size of {@code f}'s
   *     directory rounded up to a multiple of at least {@code fs.local.block.size} when the stripe
   *     size is known; else {@code fs.local.block.size} (Hadoop default 32 MiB)
   */
  @Override
  public long getDefaultBlockSize(Path f) {
    if (!ready || explicitSplitSize || !layout.isApplicable() || f == null) {
      return splitSize;
    }
    File file = pathToFile(f);
    File dir = file.isDirectory() ? file : file.getParentFile();
    if (dir == null) {
      return splitSize;
    }
    long stripe = stripeCache.getOrDefault(dir.getPath(), 0L);
    if (stripe == 0) {
      stripe = lookupStripeSize(dir);
    }
    return stripe > 0 ? alignedBlockSize(stripe, minBlockSize) : splitSize;
  }

  private long lookupStripeSize(File dir) {
    long stripe = UNKNOWN;
    try {
      OptionalLong s = layout.stripeSize(dir.toPath());
      stripe = s.isPresent() && s.getAsLong() > 0 ? s.getAsLong() : UNKNOWN;
    } catch (IOException e) {
      LOG.debug("stripe size of {} unknown", dir, e);
    }
    if (dir.isDirectory()) { // remember only what exists; a missing dir may appear striped later
      if (stripeCache.size() >= MAX_CACHED_DIRS) {
        stripeCache.clear();
      }
      stripeCache.put(dir.getPath(), stripe);
    }
    return stripe;
  }

  @Override
  public FileStatus getFileStatus(Path f) throws IOException {
    return withBlockSize(super.getFileStatus(f));
  }

  @Override
  public FileStatus[] listStatus(Path f) throws IOException {
    FileStatus[] st = super.listStatus(f); // entries of a directory come from getFileStatus
    for (int i = 0; i < st.length; i++) {
      st[i] = withBlockSize(st[i]);
    }
    return st;
  }

  /**
   * Wraps a status of RawLocalFileSystem: its block size becomes the shim's, and its owner, group
   * and permission are read with java.nio (RawLocalFileSystem's own lazy loader only accepts
   * {@code file:} paths, and forks {@code ls} for it).
   */
  private FileStatus withBlockSize(FileStatus st) {
    if (st instanceof PfsFileStatus) {
      return st;
    }
    long bs = st.isDirectory() ? st.getBlockSize() : getDefaultBlockSize(st.getPath());
    return new PfsFileStatus(st, bs);
  }

  @Override
  public boolean mkdirs(Path f) throws IOException {
    return mkdirs(f, null);
  }

  /**
   * Creates {@code f} and missing parents like {@code mkdir -p}; every directory created here
   * gets the stripe layout of the role whose directory contains it ({@link RoleLayouts}; parents
   * before children). An existing directory, or one that another process filled meanwhile, is
   * left as it is.
   */
  @Override
  public boolean mkdirs(Path f, FsPermission permission) throws IOException {
    File dir = f == null ? null : pathToFile(f);
    boolean existed = dir != null && dir.exists();
    // RawLocalFileSystem creates missing parents through this.mkdirs(parent), i.e. this method
    boolean ok = permission == null ? super.mkdirs(f) : super.mkdirs(f, permission);
    RoleLayouts.Role role = ok && !existed && layout.isApplicable() ? roles.roleOf(dir) : null;
    if (role != null && isEmptyDir(dir)) {
      layout.apply(dir.toPath(), role.settings());
      stripeCache.remove(dir.getPath());
      LOG.debug("applied {} {} of {} to {}", layout, role.settings(), role.name(), dir);
    }
    return ok;
  }

  private static boolean isEmptyDir(File dir) throws IOException {
    try (Stream<java.nio.file.Path> s = Files.list(dir.toPath())) {
      return s.findAny().isEmpty();
    } catch (NoSuchFileException e) {
      return false;
    }
  }

  /**
   * One location per block-size range of {@code [start, start+len)} (clipped to the file), each
   * listing all {@code pfs.locality.hosts}, rotated per block to spread first choices.
   *
   * @return the locations; empty for {@code len <= 0} or {@code start} at or past the end
   */
  @Override
  public BlockLocation[] getFileBlockLocations(FileStatus file, long start, long len)
      throws IOException {
    if (file == null) {
      return null;
    }
    if (start < 0 || len < 0) {
      throw new IllegalArgumentException("Invalid start or len parameter");
    }
    long fileLen = file.getLen();
    if (len == 0 || start >= fileLen) {
      return new BlockLocation[0];
    }
    long bs = file.getBlockSize() > 0 ? file.getBlockSize() : getDefaultBlockSize(file.getPath());
    long end = Math.min(fileLen, start + len);
    long first = start / bs;
    long last = (end - 1) / bs;
    BlockLocation[] locs = new BlockLocation[(int) (last - first + 1)];
    for (long b = first; b <= last; b++) {
      long off = b * bs;
      String[] h = rotate(hosts, (int) (b % hosts.length));
      String[] names = Arrays.stream(h).map(x -> x + ":9866").toArray(String[]::new);
      locs[(int) (b - first)] = new BlockLocation(names, h, off, Math.min(bs, fileLen - off));
    }
    return locs;
  }

  private static String[] rotate(String[] a, int by) {
    String[] r = new String[a.length];
    for (int i = 0; i < a.length; i++) {
      r[i] = a[(i + by) % a.length];
    }
    return r;
  }

  @Override
  public String toString() {
    return "PfsFileSystem[layout=" + layout + ", splitSize=" + splitSize
        + (explicitSplitSize ? " (explicit)" : "") + "]";
  }

  /**
   * A file status with the shim's block size, whose owner, group and permission are loaded on
   * first use with one {@code stat} (java.nio {@code unix:} attributes, symlinks followed).
   */
  private static final class PfsFileStatus extends FileStatus {
    private static final long serialVersionUID = 1L;
    private transient boolean loaded;

    PfsFileStatus(FileStatus local, long blockSize) {
      super(local.getLen(), local.isDirectory(), local.getReplication(), blockSize,
          local.getModificationTime(), local.getAccessTime(), null, null, null, local.getPath());
    }

    private synchronized void load() {
      if (loaded) {
        return;
      }
      loaded = true;
      try {
        Map<String, Object> a = Files.readAttributes(
            java.nio.file.Paths.get(getPath().toUri().getPath()), "unix:mode,owner,group");
        setPermission(new FsPermission((short) (((Integer) a.get("mode")) & 07777)));
        setOwner(((java.security.Principal) a.get("owner")).getName());
        setGroup(((java.security.Principal) a.get("group")).getName());
      } catch (IOException | UnsupportedOperationException e) {
        LOG.debug("cannot read owner/permission of {}", getPath(), e); // e.g. deleted meanwhile
      }
    }

    @Override
    public FsPermission getPermission() {
      load();
      return super.getPermission();
    }

    @Override
    public String getOwner() {
      load();
      return super.getOwner();
    }

    @Override
    public String getGroup() {
      load();
      return super.getGroup();
    }
  }

  /**
   * Sets {@code permission} less the configured umask ({@code fs.permissions.umask-mode}): the
   * job client's explicit 0644 on a submission's files becomes 0600 under hpc-hadoop's 077 (issue
   * 36 item 5; {@link PrivateLocalFileSystem}).
   *
   * @throws IOException when the permission cannot be set
   */
  @Override
  public void setPermission(Path p, FsPermission permission) throws IOException {
    super.setPermission(p, PrivateLocalFileSystem.masked(permission, getConf()));
  }
}
