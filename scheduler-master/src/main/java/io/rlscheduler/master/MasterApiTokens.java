package io.rlscheduler.master;

import io.rlscheduler.core.TaskIds;
import io.rlscheduler.core.internal.ApiTokenRecords;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** {@link ApiTokens} of a master: secrets made here, their SHA-256 in Redis. Thread-safe. */
final class MasterApiTokens implements ApiTokens {

    private static final Logger log = LoggerFactory.getLogger(MasterApiTokens.class);
    private static final SecureRandom RANDOM = new SecureRandom();
    /** Every secret starts with it, so a leaked one is easy to recognise (and to scan for). */
    static final String PREFIX = "rls_";

    private final ApiTokenRecords records;
    private final MasterHealth.Await await;

    MasterApiTokens(ApiTokenRecords records, MasterHealth.Await await) {
        this.records = records;
        this.await = await;
    }

    @Override
    public ApiToken create(String user, boolean admin) {
        TaskIds.require(user, "user");
        for (int tries = 0; ; tries++) {
            byte[] secretBytes = new byte[32];
            byte[] idBytes = new byte[6];
            RANDOM.nextBytes(secretBytes);
            RANDOM.nextBytes(idBytes);
            String secret = PREFIX + Base64.getUrlEncoder().withoutPadding().encodeToString(secretBytes);
            String id = "tk-" + HexFormat.of().formatHex(idBytes);
            ApiTokenRecords.Result result = await.await(records.create(id, sha256(secret), user, admin));
            if (result.status() == ApiTokenRecords.Status.OK) {
                log.info("API token {} made for user {}{}", id, user, admin ? " (admin)" : "");
                return new ApiToken(info(result.token()), secret);
            }
            if (tries >= 3) { // 48 random bits of id colliding four times: something else is wrong
                throw new IllegalStateException("could not store a new API token: its id kept colliding");
            }
        }
    }

    @Override
    public boolean revoke(String tokenId) {
        if (tokenId == null || tokenId.isEmpty() || tokenId.length() > 64) {
            return false;
        }
        boolean revoked = await.await(records.revoke(tokenId)).status() == ApiTokenRecords.Status.OK;
        if (revoked) {
            log.info("API token {} revoked", tokenId);
        }
        return revoked;
    }

    @Override
    public List<ApiTokenInfo> list() {
        return await.await(records.list()).stream().map(MasterApiTokens::info).toList();
    }

    @Override
    public Optional<ApiTokenInfo> verify(String secret) {
        if (secret == null || !secret.startsWith(PREFIX) || secret.length() > 128) {
            return Optional.empty();
        }
        return await.await(records.find(sha256(secret))).map(MasterApiTokens::info);
    }

    private static ApiTokenInfo info(ApiTokenRecords.Stored s) {
        return new ApiTokenInfo(s.id(), s.user(), s.admin(), s.createdAtMillis());
    }

    static String sha256(String secret) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(secret.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }
}
