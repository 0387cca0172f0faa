import Dispatch
import Logging
import Synchronization
import VTCore

#if canImport(Glibc)
import Glibc
#endif

/// Frames from a Y4M (YUV4MPEG2) file or from standard input, as ffmpeg's `-f yuv4mpegpipe`
/// and most video tools write them.
///
/// The stream header is read when the source is created, so `format` is known before the
/// first frame. A 4:2:0 picture of a regular file is mapped and leased to the encoder without
/// a copy; from a pipe (or a mono stream) each picture is read straight into a pooled
/// `PixelBuffer`. Either way the recorder's queue waits for the encoder, which is how a file
/// is read exactly as fast as the encoder takes it.
public final class Y4MSource: CaptureSource {
    public let format: CaptureFormat
    /// The path as given; "-" is standard input.
    public let path: String

    /// What only the capture thread touches: the input and the index of the next frame. The
    /// mutex is never contended in correct use; it makes that use provable to the compiler.
    private let reader: Mutex<Reader>
    private let interrupt: SourceInterrupt
    private let pool: PixelBufferPool
    /// Mapped pictures not yet given back, at most as many as the pool has buffers, so a
    /// consumer that holds pictures holds the reader back in both paths.
    private let mappedSlots: MappingSlots
    private let counters = Mutex(CaptureStatistics())
    private let sampling: Y4MStreamHeader.Sampling
    private let pictureSize: Int
    private let logger: Logger

    private struct Reader {
        var input: InputFile
        var frameIndex = 0
    }

    /// Longest FRAME line accepted. Frame parameters are rare and short; the cap stops a
    /// damaged stream from being scanned for a newline that never comes.
    private static let maximumFrameLineLength = 1024
    private static let frameMarker: [UInt8] = Array("FRAME".utf8)
    /// The rate the Y4M specification's reference tools assume when `F` is missing.
    private static let defaultFrameRate: FrameRate = .fps25

    /// Opens `path` ("-" for standard input) and reads the Y4M stream header.
    ///
    /// Warnings (interlaced input, no frame rate, a truncated last frame) go to `logger`.
    public init(path: String, bufferCount: Int = 8,
                logger: Logger = Logger(label: "vtrecord.capture")) throws(CaptureError) {
        precondition(bufferCount > 0, "a source needs at least one buffer")
        let interrupt = SourceInterrupt()
        let input = try InputFile(path: path, interrupt: interrupt)
        let name = CaptureError.displayName(path)
        let header: Y4MStreamHeader
        switch try input.readLine(maximumLength: Y4MStreamHeader.maximumLength) {
        case .line(let line):
            header = try Y4MStreamHeader.parse(line, path: path)
        case .endOfInput(let partial) where partial.isEmpty:
            throw .malformedHeader(path: path, problem: "the input is empty")
        case .endOfInput(let partial):
            _ = try Y4MStreamHeader.parse(partial, path: path)
            throw .malformedHeader(path: path, problem: "the input ends inside the header line")
        case .tooLong(let prefix):
            _ = try Y4MStreamHeader.parse(prefix, path: path)
            throw .malformedHeader(path: path, problem:
                "the header line has no end within \(Y4MStreamHeader.maximumLength) bytes")
        case .stopped:
            preconditionFailure("nothing can stop a source before it exists")
        }

        switch header.interlacing {
        case .progressive: break
        case .topFieldFirst, .bottomFieldFirst, .mixed:
            logger.warning("\(name): the Y4M header marks the video as interlaced: it is encoded as progressive frames")
        }
        if header.frameRate == nil {
            logger.warning("\(name): the Y4M header gives no frame rate: assuming \(Self.defaultFrameRate) fps")
        }

        self.path = path
        self.logger = logger
        self.interrupt = interrupt
        self.sampling = header.sampling
        self.pictureSize = header.pictureSize
        self.format = CaptureFormat(pixelFormat: .i420, width: header.width, height: header.height,
                                    frameRate: header.frameRate ?? Self.defaultFrameRate,
                                    sampleAspectRatio: header.sampleAspectRatio,
                                    fullRange: header.fullRange, isLive: false)
        self.pool = PixelBufferPool(format: .i420, width: header.width, height: header.height,
                                    capacity: bufferCount)
        self.reader = Mutex(Reader(input: input))
        self.mappedSlots = MappingSlots(count: bufferCount)
    }

    public var statistics: CaptureStatistics { counters.withLock { $0 } }

    /// Pictures handed out (read or mapped) whose frames have not been let go: 0 once every
    /// consumer let go.
    public var picturesInUse: Int { pool.inUse + mappedSlots.inUse }

    /// The next frame, or nil at the end of the input or after `stop()`.
    ///
    /// Throws on a read error or a damaged FRAME marker. A last frame cut short is not an
    /// error: every complete frame has been delivered, so it is counted in `statistics`,
    /// reported as a warning, and the stream ends there.
    public func nextFrame() throws(CaptureError) -> CapturedFrame? {
        try reader.withLock { reader throws(CaptureError) -> CapturedFrame? in
            try readFrame(&reader)
        }
    }

    public func stop() {
        interrupt.trip()
    }

    private func readFrame(_ reader: inout Reader) throws(CaptureError) -> CapturedFrame? {
        if interrupt.isTripped { return nil }
        let index = reader.frameIndex
        let markerOffset = reader.input.offset
        switch try reader.input.readLine(maximumLength: Self.maximumFrameLineLength) {
        case .stopped:
            return nil
        case .endOfInput(let partial) where partial.isEmpty:
            return nil
        case .endOfInput(let partial):
            // A stream cut inside a FRAME line is a truncated last frame, as long as what
            // is there is the start of one.
            guard Self.frameMarker.starts(with: partial) || Self.isFrameLine(partial) else {
                throw .malformedFrameMarker(path: path, frame: index, offset: markerOffset)
            }
            reportTruncated(received: 0)
            return nil
        case .tooLong:
            throw .malformedFrameMarker(path: path, frame: index, offset: markerOffset)
        case .line(let line):
            guard Self.isFrameLine(line) else {
                throw .malformedFrameMarker(path: path, frame: index, offset: markerOffset)
            }
        }

        let duration = format.frameRate.frameDuration
        let pts = MediaTime(value: Int64(index) * duration.value, timescale: duration.timescale)
        // A 4:2:0 picture of a regular file goes to the encoder straight from the page cache,
        // as the x264 CLI reads its input; mono pictures need chroma added, so they are read.
        if sampling != .mono && reader.input.isRegularFile {
            let slot = MappingSlot(waitingOn: mappedSlots)
            if let mapping = try reader.input.map(pictureSize) {
                reader.frameIndex += 1
                return CapturedFrame(slot.lease(mapping, width: format.width, height: format.height),
                                     pts: pts, sequence: UInt64(index))
            }
            // Less than a picture is left: the read below reports the truncated frame.
        }
        let picture = pool.take()
        guard let storage = picture.buffer.contiguousBytes else { preconditionFailure("a pool's buffers own their memory") }
        switch try reader.input.read(into: UnsafeMutableRawBufferPointer(rebasing: storage[..<pictureSize])) {
        case .stopped:
            return nil
        case .endOfInput(let count):
            reportTruncated(received: count)
            return nil
        case .filled:
            break
        }
        if sampling == .mono {
            fillNeutralChroma(picture.buffer)
        }
        reader.frameIndex += 1
        return CapturedFrame(picture, pts: pts, sequence: UInt64(index))
    }

    /// "FRAME" alone or followed by space-separated frame parameters, which vtrecord ignores:
    /// they only repeat or override interlacing hints per frame.
    private static func isFrameLine(_ line: [UInt8]) -> Bool {
        line.starts(with: frameMarker)
            && (line.count == frameMarker.count || line[frameMarker.count] == UInt8(ascii: " "))
    }

    private func reportTruncated(received: Int) {
        counters.withLock { $0.truncatedFrames += 1 }
        logger.warning("\(CaptureError.displayName(path)): last frame is truncated (\(received) of \(pictureSize) bytes): it is not encoded")
    }

    /// A mono stream carries luma only; chroma at 128 makes the I420 picture grey, as the
    /// mono picture was.
    private func fillNeutralChroma(_ buffer: PixelBuffer) {
        for plane in buffer.planes.dropFirst() {
            for row in 0..<plane.rows {
                memset(plane.baseAddress + row * plane.bytesPerRow, 128, plane.rowBytes)
            }
        }
    }
}

/// How many pictures a reader may have mapped at once, and how many it has.
private final class MappingSlots: Sendable {
    private let free = DispatchSemaphore(value: 0)
    private let taken = Atomic<Int>(0)

    init(count: Int) {
        // Started at zero and raised to the count: a semaphore freed below its starting value traps.
        for _ in 0..<count { free.signal() }
    }

    /// Waits for a slot and takes it.
    func take() {
        free.wait()
        taken.add(1, ordering: .relaxed)
    }

    func giveBack() {
        taken.subtract(1, ordering: .relaxed)
        free.signal()
    }

    var inUse: Int { taken.load(ordering: .relaxed) }
}

/// One of the mapped pictures a reader may have out at once (`MappingSlots`). Taken before a
/// picture is mapped; given back when the slot ends unused, or, once it leased a picture, when
/// that lease ends and the picture is unmapped.
private struct MappingSlot: ~Copyable {
    private let slots: MappingSlots
    private var held = true

    init(waitingOn slots: MappingSlots) {
        slots.take()
        self.slots = slots
    }

    deinit {
        if held { slots.giveBack() }
    }

    /// The 4:2:0 picture in `mapping`, leased without a copy. Read-only memory: the encoders
    /// only read their input pictures.
    consuming func lease(_ mapping: InputFile.Mapping, width: Int, height: Int) -> PixelBufferLease {
        var planes: [PixelPlane] = []
        var offset = 0
        for plane in 0..<PixelFormat.i420.planeCount {
            let rowBytes = PixelFormat.i420.rowBytes(plane: plane, width: width)
            let rows = PixelFormat.i420.rows(plane: plane, height: height)
            planes.append(PixelPlane(baseAddress: (mapping.bytes + offset).assumingMemoryBound(to: UInt8.self),
                                     bytesPerRow: rowBytes, rowBytes: rowBytes, rows: rows))
            offset += rowBytes * rows
        }
        // The address travels to the thread that ends the lease as a number: it is only
        // handed to munmap, once.
        let address = UInt(bitPattern: mapping.base)
        let length = mapping.length
        let slots = self.slots
        held = false
        let buffer = PixelBuffer(format: .i420, width: width, height: height, planes: planes) { _ in
            if let base = UnsafeMutableRawPointer(bitPattern: address) { unmapMemory(base, length: length) }
            slots.giveBack()
        }
        return PixelBufferLease(handingOut: buffer)
    }
}
