package io.rlscheduler.store.s3;

import java.io.InputStream;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.gaul.s3proxy.blobstore.BlobStore;
import org.gaul.s3proxy.blobstore.ForwardingBlobStore;
import org.gaul.s3proxy.blobstore.domain.MultipartUpload;
import software.amazon.awssdk.core.ResponseInputStream;
import software.amazon.awssdk.services.s3.model.GetObjectRequest;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.UploadPartRequest;
import software.amazon.awssdk.services.s3.model.UploadPartResponse;

/**
 * The s3proxy blob store as the server sees the store's requests: how many part uploads and
 * ranged GETs are being served at once (and the most at once), with a gate that holds them at
 * the server until the test opens it, and a switch that makes part uploads fail.
 */
final class ObservedBlobStore extends ForwardingBlobStore {

    /** How long a held request waits for the gate at most, so that a failing test cannot hang. */
    private static final long HOLD_LIMIT_SECONDS = 30;

    private final AtomicInteger partsInFlight = new AtomicInteger();
    private final AtomicInteger mostPartsInFlight = new AtomicInteger();
    private final AtomicInteger rangesInFlight = new AtomicInteger();
    private final AtomicInteger mostRangesInFlight = new AtomicInteger();
    private volatile CountDownLatch gate;
    private volatile boolean failParts;

    ObservedBlobStore(BlobStore delegate) {
        super(delegate);
    }

    /** Holds every part upload and ranged GET that arrives from now on until {@link #open()}. */
    void hold() {
        gate = new CountDownLatch(1);
    }

    /** Lets held requests go on, and later ones through. */
    void open() {
        CountDownLatch g = gate;
        gate = null;
        if (g != null) {
            g.countDown();
        }
    }

    /** Makes every part upload fail (the server answers 500) or serves them again. */
    void failParts(boolean fail) {
        failParts = fail;
    }

    int partsInFlight() {
        return partsInFlight.get();
    }

    int mostPartsInFlight() {
        return mostPartsInFlight.get();
    }

    int rangesInFlight() {
        return rangesInFlight.get();
    }

    int mostRangesInFlight() {
        return mostRangesInFlight.get();
    }

    /** Forgets the counts of earlier requests. */
    void reset() {
        open();
        failParts = false;
        mostPartsInFlight.set(0);
        mostRangesInFlight.set(0);
    }

    @Override
    public UploadPartResponse uploadMultipartPart(MultipartUpload upload, UploadPartRequest request, InputStream input) {
        mostPartsInFlight.accumulateAndGet(partsInFlight.incrementAndGet(), Math::max);
        try {
            passGate();
            if (failParts) {
                throw new IllegalStateException("part uploads fail in this test");
            }
            return super.uploadMultipartPart(upload, request, input);
        } finally {
            partsInFlight.decrementAndGet();
        }
    }

    @Override
    public ResponseInputStream<GetObjectResponse> getBlob(GetObjectRequest request) {
        if (request.range() == null) {
            return super.getBlob(request);
        }
        mostRangesInFlight.accumulateAndGet(rangesInFlight.incrementAndGet(), Math::max);
        try {
            passGate();
            return super.getBlob(request);
        } finally {
            rangesInFlight.decrementAndGet();
        }
    }

    private void passGate() {
        CountDownLatch g = gate;
        if (g == null) {
            return;
        }
        try {
            g.await(HOLD_LIMIT_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
