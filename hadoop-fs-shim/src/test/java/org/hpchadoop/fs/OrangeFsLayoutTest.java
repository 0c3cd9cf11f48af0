package org.hpchadoop.fs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.UserDefinedFileAttributeView;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/**
 * {@link OrangeFsLayout}: attribute names and bytes, and a round trip through real user extended
 * attributes on the build directory when its filesystem supports them (OrangeFS itself cannot run
 * here; the attribute calls are the same).
 */
class OrangeFsLayoutTest {
  private static final long MIB = 1024 * 1024;

  @Test
  void attributeNamesAndBytes() {
    Map<String, byte[]> a = OrangeFsLayout.attributesFor(new StripeSettings(4, 2 * MIB, -1));
    assertEquals(List.of("user.pvfs2.num_dfiles", "user.pvfs2.dist_name", "user.pvfs2.dist_params"),
        List.copyOf(a.keySet()));
    assertArrayEquals(new byte[] {'4', 0}, a.get("user.pvfs2.num_dfiles"));
    assertArrayEquals("simple_stripe\0".getBytes(StandardCharsets.US_ASCII),
        a.get("user.pvfs2.dist_name"));
    assertArrayEquals("strip_size:2097152\0".getBytes(StandardCharsets.US_ASCII),
        a.get("user.pvfs2.dist_params"));

    assertEquals(List.of("user.pvfs2.num_dfiles"),
        List.copyOf(OrangeFsLayout.attributesFor(new StripeSettings(8, 0, -1)).keySet()));
    assertEquals(List.of("user.pvfs2.dist_name", "user.pvfs2.dist_params"),
        List.copyOf(OrangeFsLayout.attributesFor(new StripeSettings(0, MIB, -1)).keySet()));
  }

  @Test
  void realUserXattrsOnBuildDir() throws IOException {
    Path base = Files.createDirectories(Path.of("target", "xattr-test"));
    Path dir = Files.createTempDirectory(base, "ofs");
    UserDefinedFileAttributeView view =
        Files.getFileAttributeView(dir, UserDefinedFileAttributeView.class);
    boolean supported;
    try {
      view.write("hpchadoop.probe", ByteBuffer.wrap(new byte[] {1}));
      supported = true;
    } catch (IOException | UnsupportedOperationException | NullPointerException e) {
      supported = false;
    }
    assumeTrue(supported, "user xattrs not supported on the build directory's filesystem");

    OrangeFsLayout layout = new OrangeFsLayout();
    assertEquals(OptionalLong.empty(), layout.stripeSize(dir));
    layout.apply(dir, new StripeSettings(4, 2 * MIB, -1));
    for (Map.Entry<String, byte[]> e :
        OrangeFsLayout.attributesFor(new StripeSettings(4, 2 * MIB, -1)).entrySet()) {
      String name = e.getKey().substring("user.".length());
      ByteBuffer buf = ByteBuffer.allocate(view.size(name));
      view.read(name, buf);
      assertArrayEquals(e.getValue(), buf.array(), e.getKey());
    }
    assertEquals(OptionalLong.of(2 * MIB), layout.stripeSize(dir));
    assertEquals(OptionalInt.of(4), layout.stripeCount(dir));
  }
}
