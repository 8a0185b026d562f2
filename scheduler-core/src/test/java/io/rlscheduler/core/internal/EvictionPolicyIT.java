package io.rlscheduler.core.internal;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.sync.RedisCommands;
import io.rlscheduler.testkit.RedisExtension;
import io.rlscheduler.testkit.RedisNamespace;
import io.rlscheduler.testkit.TestRedis;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.LoggerFactory;

import static org.assertj.core.api.Assertions.assertThat;

/** The core warns at start-up when Redis may evict keys, and stays quiet when it may not. */
class EvictionPolicyIT {

    @RegisterExtension
    static RedisExtension redis = new RedisExtension();

    @Test
    void warnsUnlessNoEviction(TestRedis server, RedisClient client, RedisCommands<String, String> commands,
                               RedisNamespace ns) {
        server.assumeControllable(); // changes server configuration
        assertThat(warningsOnCreate(client, ns)).isEmpty();
        commands.configSet("maxmemory-policy", "allkeys-lru");
        try {
            assertThat(warningsOnCreate(client, ns)).singleElement().asString()
                    .contains("allkeys-lru").contains("noeviction");
        } finally {
            commands.configSet("maxmemory-policy", "noeviction");
        }
    }

    private static List<String> warningsOnCreate(RedisClient client, RedisNamespace ns) {
        Logger logger = (Logger) LoggerFactory.getLogger(LeaseCore.class);
        ListAppender<ILoggingEvent> appender = new ListAppender<>();
        appender.start();
        logger.addAppender(appender);
        try (LeaseCore core = LeaseCore.create(client, CoreFixture.shortLeases(ns))) {
            return appender.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
        } finally {
            logger.detachAppender(appender);
        }
    }
}
