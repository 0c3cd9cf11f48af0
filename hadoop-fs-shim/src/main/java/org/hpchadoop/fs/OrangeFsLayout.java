package org.hpchadoop.fs;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystemException;
import java.nio.file.Path;
import java.nio.file.attribute.UserDefinedFileAttributeView;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * OrangeFS (PVFS2) striping through the extended attributes of its kernel interface:
 * {@code user.pvfs2.num_dfiles} (stripe count), {@code user.pvfs2.dist_name} =
 * {@code simple_stripe} and {@code user.pvfs2.dist_params} = {@code strip_size:BYTES}. Values are
 * written as ASCII with a trailing NUL byte, as {@code setfattr} users of OrangeFS do. OrangeFS has
 * no starting-server option, so {@code pfs.stripe.<role>.index} is ignored (with a warning).
 */
public final class OrangeFsLayout implements StripeLayout {
  private static final Logger LOG = LoggerFactory.getLogger(OrangeFsLayout.class);

  /** Stripe count attribute. */
  public static final String NUM_DFILES = "user.pvfs2.num_dfiles";
  /** Distribution name attribute. */
  public static final String DIST_NAME = "user.pvfs2.dist_name";
  /** Distribution parameters attribute. */
  public static final String DIST_PARAMS = "user.pvfs2.dist_params";
  /** The distribution whose {@code strip_size} is the stripe size. */
  public static final String SIMPLE_STRIPE = "simple_stripe";

  private static final Pattern STRIP_SIZE = Pattern.compile("strip_size:\\s*(\\d+)");

  /**
   * The attributes (full names, value bytes including the trailing NUL) that {@link #apply}
   * writes for the given settings, in write order.
   *
   * @param s the settings
   * @return attribute name to value bytes
   */
  public static Map<String, byte[]> attributesFor(StripeSettings s) {
    Map<String, byte[]> attrs = new LinkedHashMap<>();
    if (s.count() > 0) {
      attrs.put(NUM_DFILES, nulTerminated(Integer.toString(s.count())));
    }
    if (s.size() > 0) {
      attrs.put(DIST_NAME, nulTerminated(SIMPLE_STRIPE));
      attrs.put(DIST_PARAMS, nulTerminated("strip_size:" + s.size()));
    }
    return attrs;
  }

  static byte[] nulTerminated(String value) {
    byte[] b = value.getBytes(StandardCharsets.US_ASCII);
    byte[] out = new byte[b.length + 1];
    System.arraycopy(b, 0, out, 0, b.length);
    return out;
  }

  @Override
  public void apply(Path dir, StripeSettings s) throws IOException {
    if (s.index() >= 0) {
      LOG.warn("stripe index {} not applicable on OrangeFS; ignored", s.index());
    }
    UserDefinedFileAttributeView view = view(dir);
    if (view == null) {
      throw new IOException("extended attributes not supported on " + dir);
    }
    for (Map.Entry<String, byte[]> e : attributesFor(s).entrySet()) {
      view.write(javaName(e.getKey()), ByteBuffer.wrap(e.getValue()));
    }
  }

  @Override
  public OptionalLong stripeSize(Path path) throws IOException {
    String params = read(path, DIST_PARAMS);
    if (params == null) {
      return OptionalLong.empty();
    }
    Matcher m = STRIP_SIZE.matcher(params);
    return m.find() ? OptionalLong.of(Long.parseLong(m.group(1))) : OptionalLong.empty();
  }

  @Override
  public OptionalInt stripeCount(Path path) throws IOException {
    String v = read(path, NUM_DFILES);
    try {
      return v == null ? OptionalInt.empty() : OptionalInt.of(Integer.parseInt(v.strip()));
    } catch (NumberFormatException e) {
      return OptionalInt.empty();
    }
  }

  /** Java's user-attribute view adds the {@code user.} namespace itself. */
  private static String javaName(String attr) {
    return attr.substring("user.".length());
  }

  private static UserDefinedFileAttributeView view(Path p) {
    return java.nio.file.Files.getFileAttributeView(p, UserDefinedFileAttributeView.class);
  }

  /** @return the attribute's value without trailing NULs, or null when absent or unsupported */
  private static String read(Path path, String attr) {
    UserDefinedFileAttributeView view = view(path);
    if (view == null) {
      return null;
    }
    try {
      String name = javaName(attr);
      ByteBuffer buf = ByteBuffer.allocate(view.size(name));
      view.read(name, buf);
      String s = new String(buf.array(), 0, buf.position(), StandardCharsets.US_ASCII);
      int end = s.length();
      while (end > 0 && s.charAt(end - 1) == '\0') {
        end--;
      }
      return s.substring(0, end);
    } catch (FileSystemException | UnsupportedOperationException e) {
      return null; // no such attribute, or xattrs unsupported
    } catch (IOException e) {
      LOG.debug("cannot read {} of {}", attr, path, e);
      return null;
    }
  }

  @Override
  public String toString() {
    return "orangefs";
  }
}
