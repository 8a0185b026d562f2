package io.rlscheduler.protocol;

/**
 * Whether a TLS server asks its clients for a certificate ({@link ServerTlsOptions.Builder#clientAuth}).
 * A client certificate the server asked for is checked against the server's trusted certificates
 * during the TLS handshake; an untrusted one fails the handshake in every mode that asks.
 */
public enum ClientAuthMode {

    /** No client certificate is asked for: clients are identified by the handshake's proof alone. */
    NONE,

    /**
     * A client certificate is asked for but not required: a client without one connects as under
     * {@link #NONE}; a client with one must present a trusted certificate.
     */
    OPTIONAL,

    /** Every client must present a trusted certificate; one without is refused at the TLS handshake. */
    REQUIRE
}
