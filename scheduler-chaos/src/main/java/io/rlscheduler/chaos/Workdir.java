package io.rlscheduler.chaos;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The files of one chaos run, all kept for inspection: the masters' task logs, each worker's own
 * directory (its run root, which holds its state directory too, as on a machine of its own), the
 * artifact store the workers share, every JVM's output and their logging configuration, and
 * {@code chaos.log}. The workers share nothing here but the store: a check that needs what every
 * worker wrote reads each worker's directory in turn, as one would fetch it from each machine.
 *
 * @param root the work directory
 * @param logs the masters' task log files, {@code <taskId>.log}
 * @param workers one directory per worker, {@code <workerId>/runs} its run root
 * @param store the directory store of the workers' checkpoints (standing for a mount every machine sees)
 * @param jvm each JVM's output, {@code <name>.<incarnation>.log}
 * @param logback the logging configuration of the masters and workers
 */
record Workdir(Path root, Path logs, Path workers, Path store, Path jvm, Path logback) {

    private static final String LOGBACK = """
            <configuration>
              <appender name="CONSOLE" class="ch.qos.logback.core.ConsoleAppender">
                <encoder>
                  <pattern>%d{HH:mm:ss.SSS} %-5level [%thread] %logger{20} - %msg%n</pattern>
                </encoder>
              </appender>
              <logger name="io.rlscheduler" level="INFO"/>
              <logger name="io.netty" level="WARN"/>
              <logger name="io.lettuce" level="WARN"/>
              <root level="WARN">
                <appender-ref ref="CONSOLE"/>
              </root>
            </configuration>
            """;

    /** Creates the directories under {@code requested}, or under a new temporary directory, and the logging configuration. */
    static Workdir create(Optional<Path> requested) throws IOException {
        Path root = requested.isPresent() ? Files.createDirectories(requested.get().toAbsolutePath())
                : Files.createTempDirectory("rls-chaos-");
        Workdir w = new Workdir(root, Files.createDirectories(root.resolve("logs")),
                Files.createDirectories(root.resolve("workers")), Files.createDirectories(root.resolve("store")),
                Files.createDirectories(root.resolve("jvm")), root.resolve("logback-chaos.xml"));
        Files.writeString(w.logback(), LOGBACK);
        return w;
    }

    /** Returns the run's own log, the lines it printed. */
    Path chaosLog() {
        return root.resolve("chaos.log");
    }

    /** Returns the task's log file, written by the leading master. */
    Path taskLog(String taskId) {
        return logs.resolve(taskId + ".log");
    }

    /** Returns the run root of worker {@code workerId}, on its own disk. */
    Path workerRuns(String workerId) {
        return workers.resolve(workerId).resolve("runs");
    }

    /** Returns the run directory of the task's attempt {@code attempt} on the worker that ran it. */
    Path attemptDir(String workerId, String taskId, int attempt) {
        return workerRuns(workerId).resolve(taskId).resolve("attempt-" + attempt);
    }
}
