package io.rlscheduler.core.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.LinkedHashMap;

/**
 * The project's one JSON mapper, and the two readings of numbers it offers: plain (a fraction
 * reads as a double) for records and metrics, and exact (a fraction reads as a BigDecimal, so
 * {@code 0.1} and {@code 300.0} keep the text a script is given) for parameters and specs.
 * Thread-safe: configured once, never changed.
 */
public final class Json {

    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final ObjectReader EXACT = MAPPER.reader().with(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .with(JsonNodeFactory.withExactBigDecimals(true));
    private static final ObjectWriter PRETTY = MAPPER.writerWithDefaultPrettyPrinter();
    private static final TypeReference<LinkedHashMap<String, Object>> OBJECT = new TypeReference<>() { };

    private Json() {
    }

    /** Returns the shared mapper (plain numbers). Do not reconfigure it. */
    public static ObjectMapper mapper() {
        return MAPPER;
    }

    /** Returns a new empty object node. */
    public static ObjectNode object() {
        return MAPPER.createObjectNode();
    }

    /** Reads a tree, fractions as doubles. */
    public static JsonNode tree(String json) throws JsonProcessingException {
        return MAPPER.readTree(json);
    }

    /** Reads a tree, fractions as BigDecimals kept as written ({@code 0.10} stays {@code 0.10}). */
    public static JsonNode exactTree(String json) throws JsonProcessingException {
        return EXACT.readTree(json);
    }

    /** Reads a JSON object into a map in key order, fractions as doubles. */
    public static LinkedHashMap<String, Object> map(String json) throws JsonProcessingException {
        return MAPPER.readValue(json, OBJECT);
    }

    /** Reads a JSON object into a map in key order, fractions as BigDecimals. */
    public static LinkedHashMap<String, Object> exactMap(String json) throws JsonProcessingException {
        return EXACT.forType(OBJECT).readValue(json);
    }

    /** Returns the writer that indents (for files people read, such as params.json). */
    public static ObjectWriter pretty() {
        return PRETTY;
    }
}
