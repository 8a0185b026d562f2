package io.rlscheduler.testkit;

import java.io.File;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;

/**
 * A main class that {@link JvmProcessIT} runs in a child JVM. The first argument picks what it
 * does:
 * <ul>
 *   <li>{@code ready ...}: prints its arguments, {@code FIXTURE_ENV}, its working directory and a
 *       line on stderr, then {@code ready}, and sleeps; a shutdown hook prints
 *       {@code shutdown hook ran};</li>
 *   <li>{@code tick}: prints {@code tick 0}, {@code tick 1}, ... every 10 ms;</li>
 *   <li>{@code spawn}: starts {@code sleep 300}, prints {@code child <pid>} and {@code ready},
 *       and sleeps;</li>
 *   <li>{@code exit <code>}: prints {@code bye}, then {@code no newline} without a line end, and
 *       exits with that code.</li>
 * </ul>
 */
public final class JvmFixture {

    private JvmFixture() {
    }

    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "ready":
                Runtime.getRuntime().addShutdownHook(
                        new Thread(() -> System.out.println("shutdown hook ran")));
                System.out.println("args " + Arrays.toString(args));
                System.out.println("env " + System.getenv("FIXTURE_ENV"));
                System.out.println("cwd " + new File(".").getCanonicalPath());
                System.err.println("stderr line");
                System.out.println("ready");
                TimeUnit.MINUTES.sleep(5);
                break;
            case "tick":
                for (long i = 0; ; i++) {
                    System.out.println("tick " + i);
                    TimeUnit.MILLISECONDS.sleep(10);
                }
            case "spawn":
                Process child = new ProcessBuilder("sleep", "300").start();
                System.out.println("child " + child.pid());
                System.out.println("ready");
                TimeUnit.MINUTES.sleep(5);
                break;
            case "exit":
                System.out.println("bye");
                System.out.print("no newline");
                System.out.flush();
                System.exit(Integer.parseInt(args[1]));
                break;
            default:
                throw new IllegalArgumentException(args[0]);
        }
    }
}
