import CVTLiveServer
import Foundation
import VTCore
import VTLiveWire

/// vtrecord's side of its HTTP server (`--http`), which lives in a library of its own,
/// libvtrecord-http.so, loaded only when asked for. Its packages (Hummingbird, SwiftNIO,
/// swift-prometheus) hold thousands of protocol conformances, which the Swift runtime searches
/// on every dynamic cast and lookup it has not seen before: linked into vtrecord, they lengthened
/// every run's start, with or without --http. Only C types cross the boundary
/// (vtrecord_live_server.h): bytes, strings, numbers and function pointers.
///
/// The library is looked for beside the vtrecord binary (a build folder), then in
/// `../lib/vtrecord/` from it (an installation).
public final class LiveServerLink: @unchecked Sendable {
    /// What the recording answers the server, each from the server's threads.
    public struct Callbacks: Sendable {
        public var status: @Sendable () -> [UInt8]
        public var metrics: @Sendable () -> [LiveMetric]
        public var event: @Sendable (String?, Double?) -> String?
        public var stop: @Sendable () -> Void
        /// A JPEG of the next picture, answered once through the function given.
        public var snapshot: (@Sendable (@escaping @Sendable (Result<[UInt8], any Error>) -> Void) -> Void)?
        public var thumbnail: @Sendable (String) -> [UInt8]?
        public var isOpen: @Sendable (String) -> Bool

        public init(status: @escaping @Sendable () -> [UInt8], metrics: @escaping @Sendable () -> [LiveMetric],
                    event: @escaping @Sendable (String?, Double?) -> String?, stop: @escaping @Sendable () -> Void,
                    snapshot: (@Sendable (@escaping @Sendable (Result<[UInt8], any Error>) -> Void) -> Void)?,
                    thumbnail: @escaping @Sendable (String) -> [UInt8]?, isOpen: @escaping @Sendable (String) -> Bool) {
            self.status = status
            self.metrics = metrics
            self.event = event
            self.stop = stop
            self.snapshot = snapshot
            self.thumbnail = thumbnail
            self.isOpen = isOpen
        }
    }

    public struct StartError: ReportableError {
        public var description: String
        public var exitStatus: ExitStatus { .usage }
    }

    /// The library's file name.
    public static let libraryName = "libvtrecord-http.so"

    private let functions: UnsafePointer<vtl_functions>
    private let handle: OpaquePointer
    /// Kept for as long as the server may call back.
    private let context: Unmanaged<Box>

    private final class Box: Sendable {
        let callbacks: Callbacks
        init(_ callbacks: Callbacks) { self.callbacks = callbacks }
    }

    /// Loads the library, starts the server and returns once it listens.
    public init(settings: LiveServerSettings, callbacks: Callbacks) throws(StartError) {
        functions = try Self.load()
        guard let start = functions.pointee.start else { throw StartError(description: "--http: \(Self.libraryName) has no start") }
        let json: String
        do {
            json = String(decoding: try JSONEncoder().encode(settings), as: UTF8.self)
        } catch {
            throw StartError(description: "--http: the server's settings do not encode: \(error)")
        }
        let context = Unmanaged.passRetained(Box(callbacks))
        var error: UnsafeMutablePointer<CChar>?
        guard let handle = json.withCString({ start($0, Self.host(context.toOpaque()), &error) }) else {
            context.release()
            defer { free(error) }
            throw StartError(description: error.map { String(cString: $0) } ?? "--http: the server did not start")
        }
        self.handle = handle
        self.context = context
    }

    deinit {
        functions.pointee.release(handle)
        context.release()
    }

    /// The port it listens on (the one chosen for port 0).
    public var port: Int { Int(functions.pointee.port(handle)) }

    // MARK: The live stream (the recording's threads)

    public func startStream(initSegment: [UInt8], codec: String?) {
        initSegment.withUnsafeBufferPointer { bytes in
            if let codec {
                codec.withCString { functions.pointee.stream_start(handle, bytes.baseAddress, bytes.count, $0) }
            } else {
                functions.pointee.stream_start(handle, bytes.baseAddress, bytes.count, nil)
            }
        }
    }

    public func publish(_ fragment: [UInt8], keyFrame: Bool) {
        fragment.withUnsafeBufferPointer { functions.pointee.stream_publish(handle, $0.baseAddress, $0.count, keyFrame) }
    }

    public func publishPart(_ part: [UInt8], duration: Double, independent: Bool, endsSegment: Bool) {
        part.withUnsafeBufferPointer {
            functions.pointee.stream_publish_part(handle, $0.baseAddress, $0.count, duration, independent, endsSegment)
        }
    }

    public func endStream() { functions.pointee.stream_end(handle) }
    public var keyFrameWanted: Bool { functions.pointee.key_frame_wanted(handle) }
    public func keyFrameAsked() { functions.pointee.key_frame_asked(handle) }
    public var hlsWatched: Bool { functions.pointee.hls_watched(handle) }

    // MARK: JPEGs

    public var jpegWanted: Bool { functions.pointee.jpeg_wanted(handle) }

    public func publishJPEG(_ jpeg: [UInt8]) {
        jpeg.withUnsafeBufferPointer { functions.pointee.jpeg_publish(handle, $0.baseAddress, $0.count) }
    }

    // MARK: The server

    /// What the server did so far (the summary's `http`).
    public var report: HTTPReport? {
        guard let json = takeOver({ functions.pointee.report(handle, $0) }) else { return nil }
        return try? JSONDecoder().decode(HTTPReport.self, from: Data(json))
    }

    /// Ends every live answer and stops listening (again: nothing); `report` still answers after.
    public func stop() { functions.pointee.stop(handle) }

    // MARK: Loading

    private static func load() throws(StartError) -> UnsafePointer<vtl_functions> {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let folder = (executable as NSString).deletingLastPathComponent
        let candidates = [folder, (folder as NSString).appendingPathComponent("../lib/vtrecord")]
            .map { ((($0 as NSString).appendingPathComponent(libraryName)) as NSString).standardizingPath }
        guard let path = candidates.first(where: { FileManager.default.fileExists(atPath: $0) }) else {
            throw StartError(description: "--http: the HTTP server, \(libraryName), is not installed (looked for \(candidates.joined(separator: " and "))): install vtrecord with make install")
        }
        guard let library = dlopen(path, RTLD_NOW | RTLD_LOCAL) else {
            throw StartError(description: "--http: cannot load \(path): \(dlerror().map { String(cString: $0) } ?? "unknown error")")
        }
        guard let symbol = dlsym(library, VTL_ENTRY_NAME) else {
            throw StartError(description: "--http: \(path) is not vtrecord's HTTP server (no \(VTL_ENTRY_NAME))")
        }
        let entry = unsafeBitCast(symbol, to: vtl_entry.self)
        guard let functions = entry(), functions.pointee.version == VTL_VERSION else {
            throw StartError(description: "--http: \(path) belongs to another vtrecord version: install vtrecord again")
        }
        return functions
    }

    /// The callbacks as C functions; `context` is the retained `Box`.
    private static func host(_ context: UnsafeMutableRawPointer) -> vtl_host {
        func callbacks(_ context: UnsafeMutableRawPointer?) -> Callbacks {
            Unmanaged<Box>.fromOpaque(context!).takeUnretainedValue().callbacks
        }
        return vtl_host(
            context: context,
            status: { context, count in handOver(callbacks(context).status(), count) },
            metrics: { context, count in
                handOver((try? Array(JSONEncoder().encode(callbacks(context).metrics()))) ?? Array("[]".utf8), count)
            },
            event: { context, label, duration in
                callbacks(context).event(label.map { String(cString: $0) }, duration >= 0 ? duration : nil).map { strdup($0) }
            },
            stop: { context in callbacks(context).stop() },
            snapshot: { context, request, done in
                guard let snapshot = callbacks(context).snapshot else {
                    return "no stills from this recording".withCString { done?(request, nil, 0, $0) } ?? ()
                }
                let request = UncheckedPointer(request)
                snapshot { result in
                    switch result {
                    case .success(let jpeg): jpeg.withUnsafeBufferPointer { done?(request.pointer, $0.baseAddress, $0.count, nil) }
                    case .failure(let error): "\(error)".withCString { done?(request.pointer, nil, 0, $0) }
                    }
                }
            },
            thumbnail: { context, path, count in
                guard let path, let jpeg = callbacks(context).thumbnail(String(cString: path)) else { return nil }
                return handOver(jpeg, count)
            },
            file_open: { context, path in path.map { callbacks(context).isOpen(String(cString: $0)) } ?? false })
    }
}

/// A pointer the other side gave, carried to the thread that answers it.
private struct UncheckedPointer: @unchecked Sendable {
    let pointer: UnsafeMutableRawPointer?
    init(_ pointer: UnsafeMutableRawPointer?) { self.pointer = pointer }
}
