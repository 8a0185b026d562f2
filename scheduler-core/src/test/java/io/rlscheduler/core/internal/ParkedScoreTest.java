package io.rlscheduler.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The parked-score bound the Java side reads the queue with is the one parking.lua writes. */
class ParkedScoreTest {

    private static String parkingLua() throws IOException {
        try (InputStream in = LeaseCore.class.getResourceAsStream("/io/rlscheduler/core/lua/parking.lua")) {
            assertThat(in).as("parking.lua on the class path").isNotNull();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    private static String constant(String lua, String name) {
        Matcher m = Pattern.compile("(?m)^local " + name + " = '?\\(?([0-9.e]+)'?").matcher(lua);
        assertThat(m.find()).as(name + " in parking.lua").isTrue();
        return m.group(1);
    }

    @Test
    void javasParkedBoundIsParkingLuasOffsetAndItsBounds() throws IOException {
        String lua = parkingLua();
        BigDecimal offset = new BigDecimal(constant(lua, "PARK_OFFSET"));
        assertThat(offset).isEqualByComparingTo(new BigDecimal(LeaseCore.PARKED_MIN));
        assertThat(new BigDecimal(constant(lua, "PARKED_MIN"))).isEqualByComparingTo(offset);
        assertThat(new BigDecimal(constant(lua, "CLAIMABLE_MAX"))).isEqualByComparingTo(offset);
    }
}
