import CVTLiveServer
import Foundation
import Logging
import NIOCore
import VTLiveWire

// The library's side of vtrecord_live_server.h: its one exported function hands vtrecord a
// table of C functions, which build a `LiveServer` from the settings' JSON and the recording's
// callbacks, and feed it what the recording makes. No Swift value crosses: vtrecord's own copy
// of any module this library also holds is another module to the runtime.

/// The recording's callbacks, as the server's `Hooks`.
private struct Host: @unchecked Sendable {
    let raw: vtl_host

    func status() -> [UInt8] { raw.status.flatMap { status in takeOver { status(raw.context, $0) } } ?? [] }

    func metrics() -> [LiveMetric] {
        guard let json = raw.metrics.flatMap({ metrics in takeOver { metrics(raw.context, $0) } }) else { return [] }
        return (try? JSONDecoder().decode([LiveMetric].self, from: Data(json))) ?? []
    }

    func event(label: String?, duration: Double?) -> String? {
        guard let event = raw.event else { return "there is no --events to keep a clip in" }
        let answer = label.withOptionalCString { event(raw.context, $0, duration ?? -1) }
        guard let answer else { return nil }
        defer { free(answer) }
        return String(cString: answer)
    }

    func stop() { raw.stop?(raw.context) }

    var snapshot: (@Sendable () async throws -> [UInt8])? {
        guard let snapshot = raw.snapshot else { return nil }
        return { [self] in
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[UInt8], any Error>) in
                let request = Unmanaged.passRetained(SnapshotRequest(continuation)).toOpaque()
                snapshot(raw.context, request) { request, jpeg, count, error in
                    guard let request else { return }
                    let waiting = Unmanaged<SnapshotRequest>.fromOpaque(request).takeRetainedValue()
                    if let error {
                        waiting.continuation.resume(throwing: SnapshotFailed(description: String(cString: error)))
                    } else {
                        waiting.continuation.resume(returning: jpeg.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? [])
                    }
                }
            }
        }
    }

    func thumbnail(path: String) -> [UInt8]? {
        guard let thumbnail = raw.thumbnail else { return nil }
        return takeOver { count in path.withCString { thumbnail(raw.context, $0, count) } }
    }

    func isOpen(path: String) -> Bool { raw.file_open.map { open in path.withCString { open(raw.context, $0) } } ?? false }
}

private final class SnapshotRequest: @unchecked Sendable {
    let continuation: CheckedContinuation<[UInt8], any Error>
    init(_ continuation: CheckedContinuation<[UInt8], any Error>) { self.continuation = continuation }
}

private struct SnapshotFailed: Error, CustomStringConvertible {
    var description: String
}

extension Optional where Wrapped == String {
    fileprivate func withOptionalCString<R>(_ body: (UnsafePointer<CChar>?) -> R) -> R {
        switch self {
        case .some(let text): text.withCString { body($0) }
        case .none: body(nil)
        }
    }
}

private func server(_ handle: OpaquePointer?) -> LiveServer {
    Unmanaged<LiveServer>.fromOpaque(UnsafeRawPointer(handle!)).takeUnretainedValue()
}

private func buffer(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> ByteBuffer {
    ByteBuffer(bytes: UnsafeBufferPointer(start: bytes, count: bytes == nil ? 0 : count))
}

/// Builds and starts the server; nil and the reason when it cannot.
private func start(_ settingsJSON: UnsafePointer<CChar>, _ host: vtl_host) -> Result<LiveServer, LiveServerStartFailure> {
    guard let settings = try? JSONDecoder().decode(LiveServerSettings.self, from: Data(String(cString: settingsJSON).utf8)) else {
        return .failure(LiveServerStartFailure(description: "--http: the server's settings do not read"))
    }
    guard let address = HTTPAddress(settings.address) else {
        return .failure(LiveServerStartFailure(description: "--http \(settings.address): give ADDR:PORT, such as 127.0.0.1:8080 or :8080"))
    }
    let passwords: PasswordFile?
    do throws(PasswordFile.Problem) {
        passwords = try settings.passwordFile.map { path throws(PasswordFile.Problem) in try PasswordFile(path: path) }
    } catch {
        return .failure(LiveServerStartFailure(description: error.description))
    }
    let host = Host(raw: host)
    var sources: [RecordingLibrary.Source] = []
    for source in settings.library {
        guard let pattern = try? Regex(source.pattern) else { continue }
        sources.append(RecordingLibrary.Source(kind: source.kind, directory: source.directory, pattern: pattern))
    }
    let thumbnailer: RecordingLibrary.Thumbnailer? = host.raw.thumbnail == nil ? nil : { @Sendable path in host.thumbnail(path: path) }
    let library = RecordingLibrary(sources: sources, thumbnailer: thumbnailer, isOpen: { path in host.isOpen(path: path) })
    let event: (@Sendable (String?, Double?) -> String?)? = host.raw.event == nil ? nil : { @Sendable label, duration in
        host.event(label: label, duration: duration)
    }
    let hooks = LiveServer.Hooks(status: { host.status() }, metrics: { host.metrics() }, event: event,
                                 stop: { host.stop() }, snapshot: host.snapshot)
    var serverSettings = LiveServer.Settings(address: address, passwords: passwords)
    serverSettings.liveVideoAbsent = settings.liveVideoAbsent
    serverSettings.jpegsAbsent = settings.jpegsAbsent
    let server = LiveServer(settings: serverSettings,
                            stream: LiveStream(partTarget: settings.hlsPartTarget),
                            jpegs: JPEGFeed(fromCamera: settings.jpegsFromCamera), library: library, hooks: hooks)
    do throws(LiveServer.StartError) {
        // Hummingbird's own log is silenced (LiveServer.start); nothing else here logs.
        try server.start(logger: Logger(label: "vtrecord.http"))
    } catch {
        return .failure(LiveServerStartFailure(description: error.description))
    }
    return .success(server)
}

private struct LiveServerStartFailure: Error {
    var description: String
}

/// Written once, then only read.
private nonisolated(unsafe) let functions: UnsafeMutablePointer<vtl_functions> = {
    let table = UnsafeMutablePointer<vtl_functions>.allocate(capacity: 1)
    table.initialize(to: vtl_functions(
        version: VTL_VERSION,
        start: { settings, host, error in
            switch start(settings!, host) {
            case .success(let server):
                return OpaquePointer(Unmanaged.passRetained(server).toOpaque())
            case .failure(let failure):
                error?.pointee = strdup(failure.description)
                return nil
            }
        },
        port: { handle in Int32(server(handle).port) },
        stream_start: { handle, bytes, count, codec in
            server(handle).stream.start(initSegment: buffer(bytes, count), codec: codec.map { String(cString: $0) })
        },
        stream_publish: { handle, bytes, count, keyFrame in
            server(handle).stream.publish(buffer(bytes, count), keyFrame: keyFrame)
        },
        stream_publish_part: { handle, bytes, count, duration, independent, endsSegment in
            server(handle).stream.publishPart(buffer(bytes, count), duration: duration, independent: independent,
                                              endsSegment: endsSegment)
        },
        stream_end: { handle in server(handle).stream.end() },
        key_frame_wanted: { handle in server(handle).stream.keyFrameWanted },
        key_frame_asked: { handle in server(handle).stream.keyFrameAsked() },
        hls_watched: { handle in server(handle).stream.hlsWatched },
        jpeg_wanted: { handle in server(handle).jpegs.wanted },
        jpeg_publish: { handle, bytes, count in
            server(handle).jpegs.publish(buffer(bytes, count))
        },
        report: { handle, count in
            handOver((try? Array(JSONEncoder().encode(server(handle).report))) ?? [], count)
        },
        stop: { handle in server(handle).stop() },
        release: { handle in
            guard let handle else { return }
            let server = Unmanaged<LiveServer>.fromOpaque(UnsafeRawPointer(handle))
            server.takeUnretainedValue().stop()
            server.release()
        }))
    return table
}()

/// The entry point vtrecord looks up (`VTL_ENTRY_NAME`).
@_cdecl("vtrecord_live_server")
public func vtrecordLiveServer() -> UnsafePointer<vtl_functions> {
    UnsafePointer(functions)
}
