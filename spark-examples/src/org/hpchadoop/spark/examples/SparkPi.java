package org.hpchadoop.spark.examples;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaSparkContext;

/**
 * Estimates pi by Monte Carlo: SLICES tasks (the first argument, default 2) each throw 100,000 points at the unit
 * square and count those inside the quarter circle. A smoke test of Spark on the cluster's YARN; Maven Central has
 * no spark-examples jar for Spark 4, so install.sh builds this one.
 */
public final class SparkPi {
    private static final int POINTS_PER_SLICE = 100_000;

    private SparkPi() {
    }

    public static void main(String[] args) {
        int slices = args.length > 0 ? Integer.parseInt(args[0]) : 2;
        try (JavaSparkContext sc = new JavaSparkContext(new SparkConf().setAppName("SparkPi"))) {
            List<Integer> seeds = new ArrayList<>();
            for (int i = 0; i < slices; i++) {
                seeds.add(i);
            }
            long inside = sc.parallelize(seeds, slices).map(seed -> {
                SplittableRandom random = new SplittableRandom(seed);
                long hits = 0;
                for (int i = 0; i < POINTS_PER_SLICE; i++) {
                    double x = random.nextDouble();
                    double y = random.nextDouble();
                    if (x * x + y * y <= 1.0) {
                        hits++;
                    }
                }
                return hits;
            }).reduce(Long::sum);
            double pi = 4.0 * inside / ((long) slices * POINTS_PER_SLICE);
            System.out.println("Pi is roughly " + pi);
        }
    }
}
