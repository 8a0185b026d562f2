package io.rlscheduler.bench.harness;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * A plain HTTP/1.1 client on one keep-alive connection, one request at a time: what a load tool
 * does, so that the client's own work takes little of the cores the server shares with it (the
 * JDK's HttpClient, in the same JVM, took a large part). Reads answers by their Content-Length.
 */
final class KeepAliveClient implements AutoCloseable {

    record Answer(int status, String body) {
    }

    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;
    private final String host;
    private final String token;

    KeepAliveClient(InetSocketAddress address, String token) throws IOException {
        this.socket = new Socket(address.getAddress(), address.getPort());
        socket.setTcpNoDelay(true);
        this.in = new BufferedInputStream(socket.getInputStream(), 16 * 1024);
        this.out = socket.getOutputStream();
        this.host = address.getHostString() + ":" + address.getPort();
        this.token = token;
    }

    Answer post(String path, String json) throws IOException {
        byte[] body = json.getBytes(StandardCharsets.UTF_8);
        String head = "POST " + path + " HTTP/1.1\r\nHost: " + host + "\r\nAuthorization: Bearer " + token
                + "\r\nContent-Type: application/json\r\nContent-Length: " + body.length + "\r\n\r\n";
        byte[] headBytes = head.getBytes(StandardCharsets.US_ASCII);
        byte[] request = new byte[headBytes.length + body.length];
        System.arraycopy(headBytes, 0, request, 0, headBytes.length);
        System.arraycopy(body, 0, request, headBytes.length, body.length);
        out.write(request);
        out.flush();
        String status = line();
        if (status == null || !status.startsWith("HTTP/1.1 ")) {
            throw new IOException("not an HTTP answer: " + status);
        }
        int code = Integer.parseInt(status.substring(9, 12));
        int length = -1;
        for (String header; (header = line()) != null && !header.isEmpty(); ) {
            if (header.regionMatches(true, 0, "content-length:", 0, 15)) {
                length = Integer.parseInt(header.substring(15).trim());
            }
        }
        if (length < 0) {
            throw new IOException("an answer without Content-Length");
        }
        byte[] answer = in.readNBytes(length);
        return new Answer(code, new String(answer, StandardCharsets.UTF_8));
    }

    private String line() throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream(64);
        for (int c; (c = in.read()) != -1; ) {
            if (c == '\n') {
                int n = b.size();
                byte[] bytes = b.toByteArray();
                return new String(bytes, 0, n > 0 && bytes[n - 1] == '\r' ? n - 1 : n, StandardCharsets.US_ASCII);
            }
            b.write(c);
        }
        return null;
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
