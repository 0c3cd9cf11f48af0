package org.hpchadoop.spark.examples;

import java.io.IOException;
import java.io.Serializable;
import java.util.Arrays;
import java.util.Comparator;

import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.RecordWriter;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.lib.output.FileOutputFormat;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;

import scala.Tuple2;

/**
 * TeraSort on Spark: the Spark side of the bench workload spark-terasort, on the input the MapReduce terasort
 * workload sorts. Arguments: INPUT OUTPUT PARTITIONS.
 *
 * <p>INPUT is TeraGen's output (a directory of files of 100-byte records: a 10-byte key, then 90 bytes); the records
 * are read with Spark's fixed-length binary input format and sorted by key, compared as unsigned bytes (the order of
 * Hadoop's {@code Text} keys in TeraSort), with {@code sortByKey}: a range partitioner over PARTITIONS partitions,
 * whose bounds Spark finds by sampling the input in a job of its own (that job reads the whole input once more). Each
 * partition is written as one file {@code part-r-NNNNN} of raw records, the layout of TeraSort's output: partition i
 * holds keys below partition i+1's, so Hadoop's TeraValidate reads the files in name order and checks the order
 * within and across them. Kryo serializes the shuffled keys and values unless {@code spark.serializer} is set.
 */
public final class TeraSort {
    /** Bytes of a record, and of its key (TeraGen's row layout). */
    static final int RECORD = 100;
    static final int KEY = 10;

    private TeraSort() {
    }

    /** Unsigned lexicographic order of byte arrays: the order of Hadoop's {@code Text} (TeraSort's keys). */
    static final class UnsignedBytes implements Comparator<byte[]>, Serializable {
        private static final long serialVersionUID = 1L;

        @Override
        public int compare(byte[] a, byte[] b) {
            return Arrays.compareUnsigned(a, b);
        }
    }

    /** Writes each (key, value) as the key's bytes then the value's, nothing between: TeraSort's output format. */
    public static final class RecordOutputFormat extends FileOutputFormat<byte[], byte[]> {
        @Override
        public RecordWriter<byte[], byte[]> getRecordWriter(TaskAttemptContext context) throws IOException {
            Path file = getDefaultWorkFile(context, "");
            FSDataOutputStream out = file.getFileSystem(context.getConfiguration()).create(file, false);
            return new RecordWriter<byte[], byte[]>() {
                @Override
                public void write(byte[] key, byte[] value) throws IOException {
                    out.write(key);
                    out.write(value);
                }

                @Override
                public void close(TaskAttemptContext ignored) throws IOException {
                    out.close();
                }
            };
        }
    }

    public static void main(String[] args) {
        if (args.length != 3) {
            System.err.println("usage: TeraSort INPUT OUTPUT PARTITIONS");
            System.exit(2);
        }
        int partitions = Integer.parseInt(args[2]);
        SparkConf conf = new SparkConf().setAppName("TeraSort")
            .setIfMissing("spark.serializer", "org.apache.spark.serializer.KryoSerializer");
        try (JavaSparkContext sc = new JavaSparkContext(conf)) {
            JavaPairRDD<byte[], byte[]> records = sc.binaryRecords(args[0], RECORD).mapToPair(record ->
                new Tuple2<>(Arrays.copyOfRange(record, 0, KEY), Arrays.copyOfRange(record, KEY, RECORD)));
            records.sortByKey(new UnsignedBytes(), true, partitions).saveAsNewAPIHadoopFile(
                args[1], byte[].class, byte[].class, RecordOutputFormat.class, sc.hadoopConfiguration());
            System.out.println("partitions " + partitions);
        }
    }
}
