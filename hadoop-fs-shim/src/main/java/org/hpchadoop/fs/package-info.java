/**
 * The {@code pfs://} Hadoop filesystem shim for POSIX parallel filesystems: {@link
 * org.hpchadoop.fs.PfsFileSystem} (FileSystem API), {@link org.hpchadoop.fs.PfsFs} (FileContext
 * API) and the {@link org.hpchadoop.fs.StripeLayout} implementations for Lustre, OrangeFS and
 * filesystems without striping. Keys: {@link org.hpchadoop.fs.PfsConfigKeys}. {@link
 * org.hpchadoop.fs.NoChecksumLocalFileSystem} is {@code file://} without {@code .crc} side files.
 */
package org.hpchadoop.fs;
