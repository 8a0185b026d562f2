package io.rlscheduler.protocol;

/**
 * Immutable settings of the frame codec. Instances are thread-safe and may be shared by any
 * number of channels.
 *
 * <pre>{@code
 * ProtocolOptions options = ProtocolOptions.builder().maxFrameLength(8 * 1024 * 1024).build();
 * }</pre>
 */
public final class ProtocolOptions {

    /** Default largest accepted frame, header included: 4 MiB, room for a large log batch. */
    public static final int DEFAULT_MAX_FRAME_LENGTH = 4 * 1024 * 1024;

    /** Smallest value {@link Builder#maxFrameLength(int)} accepts: 1 KiB. */
    public static final int MIN_MAX_FRAME_LENGTH = 1024;

    /** Largest value {@link Builder#maxFrameLength(int)} accepts: 256 MiB. */
    public static final int MAX_MAX_FRAME_LENGTH = 256 * 1024 * 1024;

    private static final ProtocolOptions DEFAULTS = builder().build();

    private final int maxFrameLength;

    private ProtocolOptions(Builder builder) {
        this.maxFrameLength = builder.maxFrameLength;
    }

    /** Returns the options with every setting at its default. */
    public static ProtocolOptions defaults() {
        return DEFAULTS;
    }

    /** Returns a new builder with every setting at its default. */
    public static Builder builder() {
        return new Builder();
    }

    /** Returns the largest frame, in bytes and header included, that is sent or accepted. */
    public int getMaxFrameLength() {
        return maxFrameLength;
    }

    @Override
    public String toString() {
        return "ProtocolOptions{maxFrameLength=" + maxFrameLength + '}';
    }

    /** Builds {@link ProtocolOptions}. Not thread-safe. */
    public static final class Builder {

        private int maxFrameLength = DEFAULT_MAX_FRAME_LENGTH;

        private Builder() {
        }

        /**
         * Sets the largest frame, in bytes and header included, that is sent or accepted. A peer
         * whose length field claims more is disconnected before any of the body is buffered.
         *
         * @param bytes from {@link #MIN_MAX_FRAME_LENGTH} to {@link #MAX_MAX_FRAME_LENGTH}
         * @return this builder
         * @throws IllegalArgumentException if out of range
         */
        public Builder maxFrameLength(int bytes) {
            if (bytes < MIN_MAX_FRAME_LENGTH || bytes > MAX_MAX_FRAME_LENGTH) {
                throw new IllegalArgumentException("maxFrameLength must be between " + MIN_MAX_FRAME_LENGTH
                        + " and " + MAX_MAX_FRAME_LENGTH + " bytes, was " + bytes);
            }
            this.maxFrameLength = bytes;
            return this;
        }

        /** Returns the options. */
        public ProtocolOptions build() {
            return new ProtocolOptions(this);
        }
    }
}
