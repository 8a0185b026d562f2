package io.rlscheduler.http.internal;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rlscheduler.master.LogRecord;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The live log's hand-written event: valid JSON holding exactly the line, whatever the line holds. */
class ViewsTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void aLineEventCarriesAnyTextExactlyAsJsonDoes() throws Exception {
        Random random = new Random(42);
        String alphabet = "abc \"\\/\t\r\u0000\u0001\u001f\u007f\u00e9\u4e2d\ud83d\ude00";
        for (int round = 0; round < 2000; round++) {
            StringBuilder text = new StringBuilder();
            int length = random.nextInt(40);
            for (int i = 0; i < length; i++) {
                int k = random.nextInt(alphabet.length());
                if (Character.isHighSurrogate(alphabet.charAt(k))) {
                    text.append(alphabet, k, k + 2);
                } else if (!Character.isLowSurrogate(alphabet.charAt(k))) {
                    text.append(alphabet.charAt(k));
                }
            }
            LogRecord line = LogRecord.line("t-1", 2, 7, round + 1, LogRecord.Stream.STDERR, text.toString());
            StringBuilder event = new StringBuilder();
            Views.lineEvent(line, event);
            String[] parts = event.toString().split("\n");
            assertThat(parts[0]).isEqualTo("id: 2:" + (round + 1));
            assertThat(parts[1]).isEqualTo("event: line");
            assertThat(event.toString()).endsWith("\n\n");
            assertThat(event.toString().split("\n", -1)).hasSize(5);
            JsonNode data = JSON.readTree(parts[2].substring("data: ".length()));
            assertThat(data.path("text").asText()).isEqualTo(text.toString());
            assertThat(data).isEqualTo(JSON.readTree(Views.line(line).toString()));
        }
    }
}
