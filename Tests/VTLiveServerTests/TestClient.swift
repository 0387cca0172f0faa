import Hummingbird
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// An answer as the client read it.
struct TestResponse: Sendable {
    var status: HTTPResponse.Status
    var headers: HTTPFields
    var body: ByteBuffer
}

/// An HTTP/1.1 client on one connection, with SwiftNIO's own codec: requests go out in order
/// and each answer is matched to its request (a HEAD's answer has no body, whatever its
/// Content-Length says), so a body sent where none belongs breaks the next answer.
final class TestClient: Sendable {
    enum Failure: Error { case closedBeforeAnswer }

    private let channel: any Channel
    private let collector: Collector

    private init(channel: any Channel, collector: Collector) {
        self.channel = channel
        self.collector = collector
    }

    static func connect(port: Int) async throws -> TestClient {
        let collector = Collector()
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(collector)
                }
            }
            .connect(host: "127.0.0.1", port: port).get()
        return TestClient(channel: channel, collector: collector)
    }

    func execute(uri: String, method: HTTPRequest.Method, headers: HTTPFields = [:], body: ByteBuffer? = nil)
        async throws -> TestResponse {
        var fields = HTTPHeaders([("Host", "127.0.0.1")])
        for field in headers { fields.add(name: field.name.rawName, value: field.value) }
        if let body { fields.add(name: "Content-Length", value: String(body.readableBytes)) }
        let head = HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: method.rawValue), uri: uri, headers: fields)
        let answer = channel.eventLoop.makePromise(of: TestResponse.self)
        let channel = channel, collector = collector
        try await channel.eventLoop.submit {
            collector.expect(answer)
            channel.write(HTTPClientRequestPart.head(head), promise: nil)
            if let body { channel.write(HTTPClientRequestPart.body(.byteBuffer(body)), promise: nil) }
            channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
        }.get()
        return try await answer.futureResult.get()
    }

    func close() async {
        try? await channel.close()
    }

    /// Gathers each answer's parts and hands the whole answer to the oldest request waiting.
    /// Touched on the channel's event loop only.
    private final class Collector: ChannelInboundHandler, Sendable {
        typealias InboundIn = HTTPClientResponsePart

        private struct State {
            var waiting: [EventLoopPromise<TestResponse>] = []
            var answer: TestResponse?
        }

        private let state = Mutex(State())

        func expect(_ promise: EventLoopPromise<TestResponse>) { state.withLock { $0.waiting.append(promise) } }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                // HTTPField itself is not among what Hummingbird exports of HTTPTypes.
                typealias Field = HTTPFields.Element
                var fields = HTTPFields()
                for (name, value) in head.headers {
                    if let name = Field.Name(name) { fields.append(Field(name: name, value: value)) }
                }
                state.withLock { $0.answer = TestResponse(status: HTTPResponse.Status(code: Int(head.status.code)),
                                                          headers: fields, body: ByteBuffer()) }
            case .body(var bytes):
                state.withLock { _ = $0.answer?.body.writeBuffer(&bytes) }
            case .end:
                let (promise, answer) = state.withLock { state in
                    (state.waiting.isEmpty ? nil : state.waiting.removeFirst(), state.answer.take())
                }
                if let answer { promise?.succeed(answer) } else { promise?.fail(Failure.closedBeforeAnswer) }
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            let waiting = state.withLock { state in
                defer { state.waiting.removeAll() }
                return state.waiting
            }
            for promise in waiting { promise.fail(Failure.closedBeforeAnswer) }
            context.fireChannelInactive()
        }
    }
}
