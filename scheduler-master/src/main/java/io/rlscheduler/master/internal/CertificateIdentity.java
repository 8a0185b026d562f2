package io.rlscheduler.master.internal;

import io.netty.channel.Channel;
import io.netty.handler.ssl.SslHandler;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.security.auth.x500.X500Principal;

/**
 * The identity a worker's TLS client certificate gives it: the common name (CN) of the
 * certificate's subject, which must be the worker id of its hello. Subject alternative names are
 * not consulted: a certificate names one worker, by exactly one CN. A connection without TLS, or
 * whose client presented no certificate (client certificates not asked for, or optional), has no
 * certificate identity and is identified by the handshake's proof alone. Stateless.
 */
final class CertificateIdentity {

    private CertificateIdentity() {
    }

    /**
     * Returns why the hello's worker id may not be used on this channel, or null when it may: no
     * client certificate, or one whose CN is that worker id. Called on the channel's event loop
     * after the TLS handshake (the session is in memory; nothing blocks).
     */
    static String mismatch(Channel channel, String workerId) {
        SslHandler ssl = channel.pipeline().get(SslHandler.class);
        if (ssl == null) {
            return null;
        }
        Certificate[] chain;
        try {
            chain = ssl.engine().getSession().getPeerCertificates();
        } catch (SSLPeerUnverifiedException noCertificate) {
            return null;
        }
        if (chain.length == 0 || !(chain[0] instanceof X509Certificate certificate)) {
            return null;
        }
        X500Principal subject = certificate.getSubjectX500Principal();
        List<String> names = commonNames(subject);
        if (names.size() != 1) {
            return "the client certificate (" + subject.getName() + ") has " + names.size()
                    + " common names (CN) and so names no worker; one CN, the worker id, is required";
        }
        if (!names.get(0).equals(workerId)) {
            return "worker id '" + workerId + "' is not the one its client certificate names (CN '" + names.get(0) + "')";
        }
        return null;
    }

    /** Returns the CN attribute values of a subject, in order. */
    static List<String> commonNames(X500Principal subject) {
        List<String> names = new ArrayList<>();
        try {
            for (Rdn rdn : new LdapName(subject.getName(X500Principal.RFC2253)).getRdns()) {
                if (rdn.getType().equalsIgnoreCase("CN")) {
                    names.add(String.valueOf(rdn.getValue()));
                }
            }
        } catch (InvalidNameException e) {
            // The JDK wrote this name in RFC 2253 itself; a name it cannot read back names no worker.
            return List.of();
        }
        return names;
    }
}
