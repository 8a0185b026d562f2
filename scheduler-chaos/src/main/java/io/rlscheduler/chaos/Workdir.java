package io.rlscheduler.chaos;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The files of one chaos run, all kept for inspection: the masters' task logs, the workers' run
 * directories, every JVM's output and their logging configuration, and {@code chaos.log}.
 *
 * @param root the work directory
 * @param logs the masters' task log files, {@code <taskId>.log}
 * @param runs the workers' run directories, {@code <taskId>/attempt-<n>} and {@code <taskId>/checkpoints}
 * @param jvm each JVM's output, {@code <name>.<incarnation>.log}
 * @param logback the logging configuration of the masters and workers
 */
record Workdir(Path root, Path logs, Path runs, Path jvm, Path logback) {

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
                Files.createDirectories(root.resolve("runs")), Files.createDirectories(root.resolve("jvm")),
                root.resolve("logback-chaos.xml"));
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

    /** Returns the task's marks, written by {@code chaos_task.py} in its checkpoint directory. */
    Path marks(String taskId) {
        return runs.resolve(taskId).resolve("checkpoints").resolve("marks.log");
    }

    /** Returns the run directory of the task's attempt {@code attempt}, where its worker puts it by default. */
    Path attemptDir(String taskId, int attempt) {
        return runs.resolve(taskId).resolve("attempt-" + attempt);
    }
}
