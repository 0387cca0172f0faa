import Foundation
import VTCapture
import VTTestSupport

/// How the luma of a raw picture is laid out, for reading frame codes from captures.
enum RawLayout {
    /// Y U Y V: luma is every other byte.
    case yuyv
    /// NV12 and YU12 (I420): a full luma plane first, then chroma.
    case planar420
    /// Luma only, as `ffmpeg -pix_fmt gray` writes it.
    case gray

    func pictureSize(width: Int, height: Int) -> Int {
        switch self {
        case .yuyv: width * height * 2
        case .planar420: width * height * 3 / 2
        case .gray: width * height
        }
    }
}

/// The frame number coded into each picture of a raw capture (nil where none reads), in order.
func frameNumbers(in data: Data, layout: RawLayout, width: Int, height: Int) -> [Int?] {
    let size = layout.pictureSize(width: width, height: height)
    return data.pictures(ofSize: size).map { picture in
        let luma = layout == .yuyv ? stride(from: 0, to: picture.count, by: 2).map { picture[$0] } : picture
        return luma.withUnsafeBufferPointer {
            TestPatternSource.frameNumber(luma: $0.baseAddress!, width: width, height: height, bytesPerRow: width)
        }
    }
}

extension FakeCamera {
    /// Runs `v4l2-ctl -d <camera> arguments…` against the camera.
    func v4l2ctl(_ arguments: [String], sharedOwnership: Bool = false) throws -> ChildProcess.Result {
        try ChildProcess.run(["v4l2-ctl", "-d", path] + arguments,
                             environment: environment(sharedOwnership: sharedOwnership), timeout: .seconds(30))
    }

    /// Records `frames` pictures from the camera with ffmpeg's v4l2 input, as gray (luma only)
    /// into `output`. `-fps_mode passthrough` keeps ffmpeg from duplicating or dropping
    /// pictures to make a constant rate, so the file holds exactly what the device gave.
    func ffmpegGray(inputFormat: String, size: String, frameRate: Int = 30, frames: Int,
                    output: String, logLevel: String = "warning") throws -> ChildProcess.Result {
        try ffmpegRaw(inputFormat: inputFormat, size: size, frameRate: frameRate, frames: frames, output: output,
                      pixelFormat: "gray", logLevel: logLevel)
    }

    /// As `ffmpegGray`, into raw pictures of `pixelFormat`. ffmpeg's gray stretches video-range
    /// luma to full range; the camera's own luma, exactly, is the first plane of yuv420p read
    /// from its YU12 format, which ffmpeg passes through unconverted.
    func ffmpegRaw(inputFormat: String, size: String, frameRate: Int = 30, frames: Int,
                   output: String, pixelFormat: String, logLevel: String = "warning") throws -> ChildProcess.Result {
        try ChildProcess.run(["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", logLevel,
                              "-f", "v4l2", "-input_format", inputFormat, "-video_size", size,
                              "-framerate", "\(frameRate)", "-i", path, "-frames:v", "\(frames)",
                              "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt", pixelFormat, "-y", output],
                             environment: environment(), timeout: .seconds(30))
    }

    /// Records `frames` pictures of the camera's YU12 format at `width` × `height` and gives
    /// each one's luma plane, keyed by the frame number its code reads: the camera's pictures
    /// exactly, whatever ffmpeg or the machine's load did to their timing.
    func lumaPlanes(width: Int = 640, height: Int = 480, frames: Int) throws -> [Int: [UInt8]] {
        let output = file("luma-\(frames).yuv")
        let result = try ffmpegRaw(inputFormat: "yuv420p", size: "\(width)x\(height)", frames: frames, output: output,
                                   pixelFormat: "yuv420p")
        guard result.status == 0 else {
            throw ToolFailed(command: ["ffmpeg"], status: result.status, standardError: result.transcript)
        }
        let data = try Data(contentsOf: URL(fileURLWithPath: output))
        var planes: [Int: [UInt8]] = [:]
        for picture in data.pictures(ofSize: RawLayout.planar420.pictureSize(width: width, height: height)) {
            let luma = Array(picture[0..<(width * height)])
            let number = luma.withUnsafeBufferPointer {
                TestPatternSource.frameNumber(luma: $0.baseAddress!, width: width, height: height, bytesPerRow: width)
            }
            if let number { planes[number] = luma }
        }
        return planes
    }
}
