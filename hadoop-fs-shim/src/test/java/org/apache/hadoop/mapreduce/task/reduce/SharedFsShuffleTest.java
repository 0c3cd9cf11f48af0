package org.apache.hadoop.mapreduce.task.reduce;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.IntWritable;
import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Counters;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.MRJobConfig;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.Reducer;
import org.apache.hadoop.mapreduce.TaskCounter;
import org.apache.hadoop.mapreduce.lib.input.FileInputFormat;
import org.apache.hadoop.mapreduce.lib.output.FileOutputFormat;
import org.hpchadoop.shuffle.SharedMapOutputs;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link SharedFsShuffle} in a real MapReduce job (LocalJobRunner): real map tasks write
 * {@code file.out} and {@code file.out.index}, the reducers read their partitions directly and
 * merge them with Hadoop's merge manager; the reducers' output is a correct word count and the
 * counters say every shuffled byte was read directly.
 */
class SharedFsShuffleTest {
  @TempDir
  java.nio.file.Path tmp;

  /** Emits (word, 1) for each word of a line. */
  public static class Words extends Mapper<LongWritable, Text, Text, IntWritable> {
    private static final IntWritable ONE = new IntWritable(1);

    @Override
    protected void map(LongWritable key, Text line, Context context)
        throws IOException, InterruptedException {
      for (String word : line.toString().split("\\s+")) {
        if (!word.isEmpty()) {
          context.write(new Text(word), ONE);
        }
      }
    }
  }

  /** Sums the counts of a word. */
  public static class Sum extends Reducer<Text, IntWritable, Text, IntWritable> {
    @Override
    protected void reduce(Text word, Iterable<IntWritable> counts, Context context)
        throws IOException, InterruptedException {
      int sum = 0;
      for (IntWritable c : counts) {
        sum += c.get();
      }
      context.write(word, new IntWritable(sum));
    }
  }

  private Job job(int reducers, long shuffleMemoryLimit) throws IOException {
    java.nio.file.Path input = Files.createDirectories(tmp.resolve("in"));
    for (int file = 0; file < 3; file++) {
      StringBuilder text = new StringBuilder();
      for (int i = 0; i < 4000; i++) {
        text.append("w").append(i % 500).append(' ').append("f").append(file).append('\n');
      }
      Files.writeString(input.resolve("part-" + file), text, StandardCharsets.UTF_8);
    }
    Configuration conf = new Configuration();
    conf.set("mapreduce.framework.name", "local");
    conf.set("fs.defaultFS", "file:///");
    conf.set("mapreduce.cluster.local.dir", tmp.resolve("local").toString());
    conf.set("mapreduce.jobtracker.staging.root.dir", tmp.resolve("staging").toString());
    conf.set("mapreduce.job.reduce.shuffle.consumer.plugin.class", SharedFsShuffle.class.getName());
    conf.setInt("mapreduce.local.map.tasks.maximum", 2);
    conf.setInt("mapreduce.local.reduce.tasks.maximum", 2);
    if (shuffleMemoryLimit > 0) {
      // A tiny single-shuffle limit sends each map output to disk (OnDiskMapOutput).
      conf.setFloat(MRJobConfig.SHUFFLE_MEMORY_LIMIT_PERCENT, 0.0001f);
    }
    Job job = Job.getInstance(conf, "shared-fs shuffle test");
    job.setMapperClass(Words.class);
    job.setReducerClass(Sum.class);
    job.setOutputKeyClass(Text.class);
    job.setOutputValueClass(IntWritable.class);
    job.setNumReduceTasks(reducers);
    FileInputFormat.addInputPath(job, new Path(input.toUri()));
    FileOutputFormat.setOutputPath(job, new Path(tmp.resolve("out").toUri()));
    return job;
  }

  private Map<String, Integer> output() throws IOException {
    Map<String, Integer> counts = new TreeMap<>();
    try (Stream<java.nio.file.Path> parts = Files.list(tmp.resolve("out"))) {
      for (java.nio.file.Path part : parts.filter(p -> p.getFileName().toString().startsWith("part-r-")).toList()) {
        for (String line : Files.readAllLines(part)) {
          String[] kv = line.split("\t");
          counts.merge(kv[0], Integer.parseInt(kv[1]), Integer::sum);
        }
      }
    }
    return counts;
  }

  private static long count(Counters counters, String name) {
    return counters.findCounter(SharedMapOutputs.COUNTER_GROUP, name).getValue();
  }

  private void runAndCheck(int reducers, long memoryLimit) throws Exception {
    Job job = job(reducers, memoryLimit);
    assertTrue(job.waitForCompletion(false), "the job failed");
    Map<String, Integer> counts = output();
    assertEquals(503, counts.size());
    for (int i = 0; i < 500; i++) {
      assertEquals(24, counts.get("w" + i), "w" + i);
    }
    for (int file = 0; file < 3; file++) {
      assertEquals(4000, counts.get("f" + file));
    }
    Counters counters = job.getCounters();
    long shuffled = counters.findCounter(TaskCounter.REDUCE_SHUFFLE_BYTES).getValue();
    long maps = counters.findCounter(TaskCounter.SHUFFLED_MAPS).getValue();
    assertTrue(shuffled > 24000 * 4, "shuffled " + shuffled + " bytes");
    assertEquals(3L * reducers, maps);
    assertEquals(shuffled, count(counters, SharedMapOutputs.DIRECT_BYTES));
    assertEquals(maps, count(counters, SharedMapOutputs.DIRECT_MAPS));
    assertEquals(0, count(counters, SharedMapOutputs.HTTP_BYTES));
    assertEquals(0, count(counters, SharedMapOutputs.HTTP_MAPS));
  }

  @Test
  void reducersReadMapOutputsDirectlyIntoMemory() throws Exception {
    runAndCheck(2, 0);
  }

  @Test
  void reducersReadMapOutputsDirectlyToDisk() throws Exception {
    runAndCheck(3, 1);
  }
}
