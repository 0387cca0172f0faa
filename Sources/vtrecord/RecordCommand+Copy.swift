import ArgumentParser
import Logging
import VTCapture
import VTCore
import VTOutput
import VTPictures

extension Record {
    /// `--encoder copy` stores a camera's own Motion-JPEG or H.264 frames: it needs a camera,
    /// outputs that carry what it stores (Motion JPEG: Matroska and MP4 files; H.264: any), and
    /// nothing that needs the pictures, which it never decodes. `--prefer-copy` asks `auto` for
    /// the same where it can.
    func validateCopy() throws {
        if encoder.preferCopy && encoder.encoder != .auto {
            throw ValidationError("--prefer-copy applies to --encoder auto, which it lets store the camera's frames")
        }
        guard encoder.encoder == .copy else {
            if input.checkFrames != .markers && !encoder.preferCopy {
                throw ValidationError("--check-frames applies to --encoder copy: an encoder decodes every frame anyway")
            }
            if input.format == .h264 && !encoder.preferCopy {
                throw ValidationError("--format h264 is stored as the camera sends it, never decoded: add --encoder copy")
            }
            return
        }
        if let obstacle = copyObstacle() { throw ValidationError(obstacle) }
    }

    /// What stands in the way of storing the camera's frames as they come, in one line naming
    /// what to do instead; nil when nothing does.
    func copyObstacle() -> String? {
        if input.input != nil || input.testPattern {
            return "--encoder copy stores a camera's own MJPEG or H.264 frames, and "
                + "\(input.input != nil ? "--input" : "--test-pattern") sends pictures: use x264 or vaapi"
        }
        if let format = input.format.pixelFormat, format != .mjpeg && format != .h264 {
            return "--encoder copy stores a camera's own MJPEG or H.264 frames, not \(format.rawValue): "
                + "use --format mjpeg or h264, or another --encoder"
        }
        if input.format == .h264 && input.timing == .cfr {
            return "--timing cfr repeats frames into empty slots, which a camera's H.264 cannot take: "
                + "each access unit is stored once, at its time"
        }
        // An MJPEG camera's stills are its own JPEGs; an H.264 camera's stream gives none.
        let needPictures = [events.motion ? "--motion" : nil,
                            input.format == .h264 ? output.snapshot.map { _ in "--snapshot" } : nil,
                            http.liveSize.map { _ in "--live-size" }, http.liveBitrate.map { _ in "--live-bitrate" }]
            .compactMap { $0 }
        if let first = needPictures.first {
            return "\(first) needs the pictures, which --encoder copy does not decode: "
                + (input.format == .h264 ? "ask the camera for --format mjpeg or a raw format, or leave \(first) out"
                                         : "record with x264 or vaapi")
        }
        if input.format == .h264, let given = [http.httpMjpegFps.map { _ in "--http-mjpeg-fps" },
                                               http.httpMjpegSize.map { _ in "--http-mjpeg-size" }].compactMap({ $0 }).first {
            return "\(given): a camera's H.264 copied as it comes gives no pictures for /stream.mjpeg; leave it out"
        }
        // H.264 goes wherever an encoder's would.
        guard input.format != .h264 else { return nil }
        do throws(UsageError) {
            if let destination = try output.recordingDestination() {
                return "-o \(destination): a stream carries H.264, and --encoder copy keeps MJPEG: write it to a .mkv or .mp4 file"
            }
            var files: [(String, Container)] = []
            if let recording = output.recording { files.append((recording, try output.chosenContainer())) }
            for branch in try output.branches() {
                guard case .file(let path) = branch.target else {
                    return "-o \(branch.name): a stream carries H.264, and --encoder copy keeps MJPEG: "
                        + "write it to a .mkv or .mp4 file"
                }
                files.append((path, branch.fileContainer))
            }
            if let clips = events.events, let container = try events.container() { files.append((clips, container)) }
            for (path, container) in files where container != .mkv && container != .mp4 {
                return "\(path): a .\(container.extensions[0]) file cannot carry MJPEG, which --encoder copy keeps: "
                    + "write a .mkv or .mp4 file"
            }
        } catch {
            return error.message
        }
        return nil
    }
}
