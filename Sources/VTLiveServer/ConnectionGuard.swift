import NIOCore
import NIOHTTPTypes
import Synchronization

/// Ends the connections that would hold the server's resources without using them, on the
/// connection's own event loop:
/// - a request must arrive whole (head, body, end) within `requestTime` of the connection
///   opening or of the answer before it ending: a client that sends its headers a byte at a
///   time (slow-loris), or says nothing, is closed, and so is a keep-alive connection left idle;
/// - a client that stops reading while an answer is being sent (its socket full, the channel
///   not writable) for `stallTime` is closed, which ends the answer being written and lets go
///   of what it held; its socket's send buffer is fixed (`sendBuffer`) so that this comes soon.
final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// What the guards did, for /metrics.
    final class Counters: Sendable {
        /// Closed for not sending a whole request in time (idle keep-alive connections included).
        let timedOut = Atomic<Int>(0)
        let stalledClients = Atomic<Int>(0)
        init() {}
    }

    private let requestTime: TimeAmount
    private let stallTime: TimeAmount
    private let counters: Counters
    private var requestDeadline: Scheduled<Void>?
    private var stallDeadline: Scheduled<Void>?

    init(requestTime: TimeAmount, stallTime: TimeAmount, counters: Counters) {
        self.requestTime = requestTime
        self.stallTime = stallTime
        self.counters = counters
    }

    func handlerAdded(context: ChannelHandlerContext) {
        // The kernel's send buffer grows to 4 MB by itself on Linux; a fixed one bounds what a
        // client that stops reading holds there, and makes it unwritable (and closed) soon.
        try? context.channel.syncOptions?.setOption(ChannelOptions.socketOption(.so_sndbuf), value: Self.sendBuffer)
        if context.channel.isActive { armRequestDeadline(context) }
    }

    /// Enough for 40 Mbit/s at a 100 ms round trip.
    static let sendBuffer: SocketOptionValue = 512 << 10

    func handlerRemoved(context: ChannelHandlerContext) { cancelAll() }

    func channelActive(context: ChannelHandlerContext) {
        armRequestDeadline(context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        cancelAll()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .end = unwrapInboundIn(data) {
            requestDeadline?.cancel()
            requestDeadline = nil
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { armRequestDeadline(context) }
        context.write(data, promise: promise)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            stallDeadline?.cancel()
            stallDeadline = nil
        } else if stallDeadline == nil {
            let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
            let counters = counters
            stallDeadline = context.eventLoop.scheduleTask(in: stallTime) {
                counters.stalledClients.add(1, ordering: .relaxed)
                loopBound.value.close(promise: nil)
            }
        }
        context.fireChannelWritabilityChanged()
    }

    private func armRequestDeadline(_ context: ChannelHandlerContext) {
        requestDeadline?.cancel()
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        let counters = counters
        requestDeadline = context.eventLoop.scheduleTask(in: requestTime) {
            counters.timedOut.add(1, ordering: .relaxed)
            loopBound.value.close(promise: nil)
        }
    }

    private func cancelAll() {
        requestDeadline?.cancel()
        stallDeadline?.cancel()
        requestDeadline = nil
        stallDeadline = nil
    }
}
