import ArgumentParser
import CTurboJPEG
import Foundation
import VTCapture
import VTCore

#if canImport(Glibc)
import Glibc
import VTPictures
#endif

/// Times what the capture thread does to one camera picture, with the capture thread's own
/// code (`FrameConverter`): YUYV → I420 with libyuv next to a plain memcpy of the same bytes,
/// and a 4:2:2 Motion-JPEG decoded to I420 with libturbojpeg. Run by bench/run.py, which makes
/// the pictures; prints one JSON object.
@main
struct ConversionBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vtrecord-bench",
        abstract: "Time vtrecord's per-frame conversions against memcpy (used by make bench).")

    @Option(help: "Picture width.") var width: Int
    @Option(help: "Picture height.") var height: Int
    @Option(help: "One packed YUYV picture (ffmpeg -pix_fmt yuyv422 -f rawvideo).") var yuyv: String
    @Option(help: "The same picture as planar 4:2:2 (-pix_fmt yuv422p), compressed here to the JPEG a webcam sends.")
    var yuv422p: String
    @Option(help: "libjpeg quality of that JPEG; webcams send roughly 80–90.") var jpegQuality: Int = 85
    @Option(help: "Timed repetitions of each operation; the median is reported.") var iterations: Int = 200
    @Option(help: "Also write the JPEG here, so another decoder can be timed on the same bytes.")
    var jpegOut: String?

    struct Result: Encodable {
        let width: Int
        let height: Int
        let iterations: Int
        let memcpyBytes: Int
        let memcpyMs: Double
        let yuyvToI420Ms: Double
        let yuyvToI420VsMemcpy: Double
        let jpegBytes: Int
        let jpegQuality: Int
        let jpegSubsampling: String
        let mjpegDecodeMs: Double
        /// libturbojpeg's own decode of the same JPEG to its 4:2:2 planes, without the
        /// 4:2:2 → 4:2:0 chroma scaling FrameConverter adds: the floor for that picture.
        let turbojpegDecodeOnlyMs: Double
    }

    func validate() throws {
        guard width > 0, height > 0, width % 2 == 0, height % 2 == 0 else {
            throw ValidationError("--width and --height must be even and positive")
        }
        guard iterations > 0 else { throw ValidationError("--iterations must be positive") }
    }

    func run() throws {
        let packed = try load(yuyv, expected: width * height * 2)
        let planar = try load(yuv422p, expected: width * height * 2)
        let jpeg = try compress422(planar)
        if let jpegOut { try Data(jpeg).write(to: URL(fileURLWithPath: jpegOut)) }
        let converter = FrameConverter(width: width, height: height)
        let picture = PixelBuffer(format: .i420, width: width, height: height)
        let copyTarget = UnsafeMutableRawPointer.allocate(byteCount: packed.count, alignment: 64)
        defer { copyTarget.deallocate() }

        let copyMs = try packed.withUnsafeBytes { source in
            try median { memcpy(copyTarget, source.baseAddress!, source.count) }
        }
        let yuyvMs = try packed.withUnsafeBytes { source in
            try median {
                try converter.convertYUYV(source.baseAddress!, bytesPerLine: width * 2, bytes: source.count,
                                          into: picture)
            }
        }
        let jpegMs = try jpeg.withUnsafeBytes { source in
            try median { try converter.decodeJPEG(source.baseAddress!, bytes: source.count, into: picture) }
        }
        let decodeOnlyMs = try jpeg.withUnsafeBytes { source in
            try decodeOnly(source, into: planar.count)
        }

        let result = Result(width: width, height: height, iterations: iterations,
                            memcpyBytes: packed.count, memcpyMs: copyMs,
                            yuyvToI420Ms: yuyvMs, yuyvToI420VsMemcpy: yuyvMs / copyMs,
                            jpegBytes: jpeg.count, jpegQuality: jpegQuality, jpegSubsampling: "4:2:2",
                            mjpegDecodeMs: jpegMs, turbojpegDecodeOnlyMs: decodeOnlyMs)
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.sortedKeys]
        print(String(decoding: try encoder.encode(result), as: UTF8.self))
    }

    /// Median milliseconds of tjDecompressToYUVPlanes alone, into planes at the JPEG's own
    /// subsampling.
    private func decodeOnly(_ jpeg: UnsafeRawBufferPointer, into bytes: Int) throws -> Double {
        guard let decompressor = tjInitDecompress() else { throw Failure("tjInitDecompress failed") }
        defer { tjDestroy(decompressor) }
        let target = UnsafeMutablePointer<UInt8>.allocate(capacity: bytes)
        defer { target.deallocate() }
        let source = jpeg.baseAddress!.assumingMemoryBound(to: UInt8.self)
        var planes: [UnsafeMutablePointer<UInt8>?] = [target, target + width * height, target + width * height * 3 / 2]
        var strides: [Int32] = [Int32(width), Int32(width / 2), Int32(width / 2)]
        return try median {
            guard tjDecompressToYUVPlanes(decompressor, source, UInt(jpeg.count), &planes, Int32(width), &strides,
                                          Int32(height), 0) == 0 else {
                throw Failure("tjDecompressToYUVPlanes: \(String(cString: tjGetErrorStr2(decompressor)))")
            }
        }
    }

    /// Milliseconds per call, the median of `iterations` calls after a few untimed ones, so
    /// the data is in cache and the decoder's scratch memory exists: the steady state of a
    /// capture thread.
    private func median(_ body: () throws -> Void) throws -> Double {
        for _ in 0..<min(10, iterations) { try body() }
        var samples: [Double] = []
        samples.reserveCapacity(iterations)
        for _ in 0..<iterations {
            let start = now()
            try body()
            samples.append(Double(now() - start) / 1e6)
        }
        samples.sort()
        return samples[samples.count / 2]
    }

    private func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    private func load(_ path: String, expected: Int) throws -> Data {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        guard data.count >= expected else {
            throw ValidationError("\(path) holds \(data.count) bytes, a \(width)x\(height) picture needs \(expected)")
        }
        return data.prefix(expected)
    }

    /// The JPEG a UVC camera sends: baseline, 4:2:2, compressed from the planar picture as the
    /// fake camera (Tests/FakeV4L2/picture.c) compresses its frames.
    private func compress422(_ planar: Data) throws -> [UInt8] {
        guard let compressor = tjInitCompress() else { throw Failure("tjInitCompress failed") }
        defer { tjDestroy(compressor) }
        var output: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        let status = planar.withUnsafeBytes { bytes -> Int32 in
            let y = bytes.baseAddress!.assumingMemoryBound(to: UInt8.self)
            var planes: [UnsafePointer<UInt8>?] = [y, y + width * height, y + width * height * 3 / 2]
            return tjCompressFromYUVPlanes(compressor, &planes, Int32(width), nil, Int32(height),
                                           Int32(TJSAMP_422.rawValue), &output, &size, Int32(jpegQuality), 0)
        }
        defer { tjFree(output) }
        guard status == 0, let output else {
            throw Failure("tjCompressFromYUVPlanes: \(String(cString: tjGetErrorStr2(compressor)))")
        }
        return Array(UnsafeBufferPointer(start: output, count: Int(size)))
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
