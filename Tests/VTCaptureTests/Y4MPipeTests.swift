import Foundation
import Synchronization
import Testing
import VTCore
import VTCapture

/// Y4M arriving through pipes, FIFOs and standard input, where reads come back short and can
/// block, and the pool that makes a file wait for its consumer.
@Suite(.serialized)
struct Y4MPipeTests {
    static let header = "YUV4MPEG2 W64 H48 F30:1"
    static let pictureSize = 64 * 48 * 3 / 2

    private func collect(_ source: Y4MSource) throws -> [[UInt8]] {
        var pictures: [[UInt8]] = []
        while let frame = try source.nextFrame() {
            pictures.append(pictureBytes(frame.buffer!))
            _ = consume frame
        }
        return pictures
    }

    private func expected(frames: Int) -> [[UInt8]] {
        (0..<frames).map { Y4MSourceStreamTests.picture($0, size: Self.pictureSize) }
    }

    /// Writes `data` to `fd` in small pieces with pauses, so the reader sees short reads that
    /// split header, FRAME lines and pictures at arbitrary places.
    private static func trickle(_ data: Data, to fd: Int32) {
        brokenPipesIgnored
        var offset = 0
        var piece = 1
        while offset < data.count {
            let n = min(piece, data.count - offset)
            let written = data.withUnsafeBytes { write(fd, $0.baseAddress! + offset, n) }
            if written <= 0 { break }
            offset += written
            piece = piece % 3001 + 997
            usleep(200)
        }
    }

    @Test func readsAFIFOFedInSmallPieces() throws {
        let dir = try TemporaryDirectory()
        let fifo = dir.path("input.fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        let data = Y4MSourceStreamTests.stream(header: Self.header, size: Self.pictureSize, frames: 6)
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            let fd = open(fifo, O_WRONLY)
            Self.trickle(data, to: fd)
            close(fd)
            done.signal()
        }
        let source = try Y4MSource(path: fifo)
        #expect(try collect(source) == expected(frames: 6))
        done.wait()
    }

    /// Runs `body` with standard input replaced by a pipe that `data` trickles into, and
    /// waits for the feeder before putting standard input back.
    private static func withStandardInput(fedWith data: Data, _ body: () throws -> Void) throws {
        var fds: [Int32] = [0, 0]
        try #require(pipe(&fds) == 0)
        let savedInput = dup(STDIN_FILENO)
        try #require(savedInput >= 0 && dup2(fds[0], STDIN_FILENO) == STDIN_FILENO)
        close(fds[0])
        let writeEnd = fds[1]
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            trickle(data, to: writeEnd)
            close(writeEnd)
            done.signal()
        }
        defer {
            // Restoring standard input closes the pipe's read end, so a feeder still writing
            // (when the body failed early) gets EPIPE instead of blocking.
            dup2(savedInput, STDIN_FILENO)
            close(savedInput)
            done.wait()
        }
        try body()
    }

    @Test func readsStandardInput() throws {
        let data = Y4MSourceStreamTests.stream(header: Self.header, size: Self.pictureSize, frames: 4)
        try Self.withStandardInput(fedWith: data) {
            let source = try Y4MSource(path: "-")
            #expect(source.path == "-")
            #expect(try collect(source) == expected(frames: 4))
        }
    }

    @Test func truncationOnStandardInputNamesIt() throws {
        let data = Y4MSourceStreamTests.stream(header: Self.header, size: Self.pictureSize, frames: 2).dropLast(10)
        try Self.withStandardInput(fedWith: data) {
            let (logger, messages) = RecordingLogHandler.logger()
            let source = try Y4MSource(path: "-", logger: logger)
            #expect(try collect(source).count == 1)
            #expect(messages.all == ["warning: standard input: last frame is truncated (\(Self.pictureSize - 10) of \(Self.pictureSize) bytes): it is not encoded"])
        }
    }

    @Test func stopInterruptsAReadWaitingOnAPipe() throws {
        let dir = try TemporaryDirectory()
        let fifo = dir.path("input.fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        let data = Y4MSourceStreamTests.stream(header: Self.header, size: Self.pictureSize, frames: 1)
        let writerMayClose = DispatchSemaphore(value: 0)
        let writerClosed = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            let fd = open(fifo, O_WRONLY)
            Self.trickle(data, to: fd)
            // Holds the pipe open without writing: the reader waits for a frame that never comes.
            writerMayClose.wait()
            close(fd)
            writerClosed.signal()
        }
        let source = try Y4MSource(path: fifo)
        _ = try requireFrame(try source.nextFrame())
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.2) { source.stop() }
        let start = Date()
        #expect(try noFrame { try source.nextFrame() })
        #expect(Date().timeIntervalSince(start) < 5)
        writerMayClose.signal()
        writerClosed.wait()
    }

    /// A regular file's pictures are mapped, a FIFO's read into pooled buffers; either way a
    /// consumer holding `bufferCount` pictures holds the reader back.
    @Test(arguments: [false, true])
    func heldBuffersHoldBackTheNextFrame(throughFIFO: Bool) throws {
        let dir = try TemporaryDirectory()
        let path = dir.path(throughFIFO ? "input.fifo" : "input.y4m")
        let data = Y4MSourceStreamTests.stream(header: Self.header, size: Self.pictureSize, frames: 4)
        let written = DispatchSemaphore(value: 0)
        if throughFIFO {
            #expect(mkfifo(path, 0o600) == 0)
            DispatchQueue.global().async {
                let fd = open(path, O_WRONLY)
                Self.trickle(data, to: fd)
                close(fd)
                written.signal()
            }
        } else {
            try data.write(to: URL(fileURLWithPath: path))
            written.signal()
        }
        let source = try Y4MSource(path: path, bufferCount: 2)
        let first = try requireFrame(try source.nextFrame())
        let second = try requireFrame(try source.nextFrame())
        // Mapped pictures are not the pool's buffers, which own their memory.
        #expect((first.buffer!.contiguousBytes == nil) == !throughFIFO)

        let delivered = DispatchSemaphore(value: 0)
        let third = Mutex<CapturedFrame?>(nil)
        DispatchQueue.global().async {
            third.withLock { slot in
                do { slot = try source.nextFrame() } catch { slot = nil }
            }
            delivered.signal()
        }
        #expect(delivered.wait(timeout: .now() + 0.3) == .timedOut, "no buffer is free, so no frame can be read")
        let firstBuffer = first.buffer
        _ = consume first
        try #require(delivered.wait(timeout: .now() + 10) == .success)
        let frame = try requireFrame(third.withLock { $0.take() })
        #expect(frame.sequence == 2)
        if throughFIFO { #expect(frame.buffer === firstBuffer) }
        #expect(pictureBytes(frame.buffer!) == Y4MSourceStreamTests.picture(2, size: Self.pictureSize))
        _ = consume frame
        _ = consume second
        let last = try requireFrame(try source.nextFrame())
        #expect(pictureBytes(last.buffer!) == Y4MSourceStreamTests.picture(3, size: Self.pictureSize))
        _ = consume last
        #expect(try noFrame { try source.nextFrame() })
        written.wait()
    }
}

