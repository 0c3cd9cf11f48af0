package org.hpchadoop.spark.examples;

import java.util.Arrays;

import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.mllib.clustering.KMeansModel;
import org.apache.spark.mllib.linalg.Vector;
import org.apache.spark.mllib.linalg.Vectors;

/**
 * MLlib's KMeans over text points (one point a line, coordinates separated by spaces): the Spark side of the bench
 * workload spark-kmeans, whose points are the ones the Mahout kmeans workload clusters. Arguments: INPUT K
 * ITERATIONS [SEED]. Like Mahout's driver in that workload: k random points as initial centres, exactly ITERATIONS
 * rounds (convergence tolerance 0). Prints "iterations N", "cost C" (sum of squared distances) and "centres K".
 */
public final class KMeans {
    private KMeans() {
    }

    public static void main(String[] args) {
        if (args.length < 3) {
            System.err.println("usage: KMeans INPUT K ITERATIONS [SEED]");
            System.exit(2);
        }
        int k = Integer.parseInt(args[1]);
        int iterations = Integer.parseInt(args[2]);
        long seed = args.length > 3 ? Long.parseLong(args[3]) : 1L;
        try (JavaSparkContext sc = new JavaSparkContext(new SparkConf().setAppName("KMeans"))) {
            JavaRDD<Vector> points = sc.textFile(args[0]).filter(line -> !line.isBlank()).map(line ->
                Vectors.dense(Arrays.stream(line.trim().split(" +")).mapToDouble(Double::parseDouble).toArray()))
                .cache();
            KMeansModel model = new org.apache.spark.mllib.clustering.KMeans().setK(k).setMaxIterations(iterations)
                .setInitializationMode("random").setEpsilon(0.0).setSeed(seed).run(points.rdd());
            System.out.println("iterations " + model.numIter());
            System.out.println("cost " + model.computeCost(points.rdd()));
            System.out.println("centres " + model.clusterCenters().length);
        }
    }
}
