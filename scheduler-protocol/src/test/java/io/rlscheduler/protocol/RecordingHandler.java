package io.rlscheduler.protocol;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** Application stand-in for codec tests: records every message the pipeline delivers. */
final class RecordingHandler extends SimpleChannelInboundHandler<Object> {

    final List<Object> received = new CopyOnWriteArrayList<>();

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, Object msg) {
        received.add(msg);
    }
}
