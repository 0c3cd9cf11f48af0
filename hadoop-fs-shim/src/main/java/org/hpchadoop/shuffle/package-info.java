/**
 * The shared-filesystem shuffle's configuration and counters: reducers read map outputs straight
 * from the NodeManagers' local dirs when those are on a filesystem every node mounts. The plugin
 * itself is {@code org.apache.hadoop.mapreduce.task.reduce.SharedFsShuffle}.
 */
package org.hpchadoop.shuffle;
