package org.hpchadoop.fs;

import java.io.IOException;
import java.lang.reflect.Constructor;
import java.nio.file.Path;
import java.util.Locale;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;

/**
 * Reads and sets the striping of a parallel filesystem directory.
 *
 * <p>Chosen by {@code pfs.layout} (see {@link #fromConf}). Implementations must be thread-safe.
 */
public interface StripeLayout {

  /**
   * @param path a local file or directory
   * @return its stripe size in bytes, or empty when unknown or not applicable
   * @throws IOException when the lookup itself fails unexpectedly
   */
  OptionalLong stripeSize(Path path) throws IOException;

  /**
   * @param path a local file or directory
   * @return its stripe count, or empty when unknown or not applicable
   * @throws IOException when the lookup itself fails unexpectedly
   */
  default OptionalInt stripeCount(Path path) throws IOException {
    return OptionalInt.empty();
  }

  /**
   * Applies a layout to a new, empty directory; files created in it inherit the layout.
   *
   * @param dir an existing empty local directory
   * @param settings what to set; never {@link StripeSettings#isUnset() unset}
   * @throws IOException when the layout cannot be applied
   */
  void apply(Path dir, StripeSettings settings) throws IOException;

  /** @return false when striping does not apply to this filesystem ({@link NoLayout}) */
  default boolean isApplicable() {
    return true;
  }

  /**
   * Creates the layout named by {@code pfs.layout}: {@code lustre}, {@code orangefs},
   * {@code none}, {@code auto} (the default; same as {@code none}), or the class name of an
   * implementation with a public constructor taking a {@link Configuration} or none.
   *
   * @param conf Hadoop configuration
   * @return the layout
   * @throws IllegalArgumentException when the value names no known layout, or
   *     {@code pfs.lfs.timeout} is not positive
   */
  static StripeLayout fromConf(Configuration conf) {
    String name = conf.getTrimmed(PfsConfigKeys.LAYOUT, "auto");
    switch (name.toLowerCase(Locale.ROOT)) {
      case "lustre":
        return new LustreLayout(conf.getTrimmed(PfsConfigKeys.LFS_COMMAND, "lfs"),
            conf.getTimeDuration(PfsConfigKeys.LFS_TIMEOUT, LustreLayout.DEFAULT_TIMEOUT_SECONDS,
                TimeUnit.SECONDS));
      case "orangefs":
        return new OrangeFsLayout();
      case "none":
      case "auto":
      case "":
        return NoLayout.INSTANCE;
      default:
        try {
          Class<? extends StripeLayout> cls =
              conf.getClassByName(name).asSubclass(StripeLayout.class);
          try {
            Constructor<? extends StripeLayout> c = cls.getConstructor(Configuration.class);
            return c.newInstance(conf);
          } catch (NoSuchMethodException e) {
            return cls.getConstructor().newInstance();
          }
        } catch (ReflectiveOperationException | ClassCastException e) {
          throw new IllegalArgumentException(PfsConfigKeys.LAYOUT + "=" + name
              + ": expected lustre, orangefs, none, auto or a StripeLayout class name", e);
        }
    }
  }
}
