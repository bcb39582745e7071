import Foundation

/// WAV files for the speech tests, in any of the layouts the decoder reads.
public enum WAVBuilder {
    /// A file of `frames` frames: `sample(frame, channel)` in -1…1, encoded as `tag` (1 PCM,
    /// 3 float) of `bits`; `extensible` wraps the format in WAVE_FORMAT_EXTENSIBLE.
    public static func file(rate: Int, channels: Int, bits: Int, tag: Int = 1, frames: Int, extensible: Bool = false,
                     sample: (Int, Int) -> Double) -> [UInt8] {
        var data: [UInt8] = []
        for frame in 0..<frames {
            for channel in 0..<channels {
                let value = max(-1, min(1, sample(frame, channel)))
                switch (tag, bits) {
                case (3, 32): append(&data, UInt32(Float(value).bitPattern), 4)
                case (_, 8): data.append(UInt8(clamping: Int((value * 127).rounded()) + 128))
                case (_, 16): append(&data, UInt32(UInt16(bitPattern: Int16((value * 32767).rounded()))), 2)
                case (_, 24): append(&data, UInt32(bitPattern: Int32((value * 8_388_607).rounded())), 3)
                default: append(&data, UInt32(bitPattern: Int32((value * 2_147_483_647).rounded())), 4)
                }
            }
        }
        return wrap(data: data, rate: rate, channels: channels, bits: bits, tag: tag, extensible: extensible)
    }

    /// The RIFF header, `fmt ` and `data` chunks around `data`.
    public static func wrap(data: [UInt8], rate: Int, channels: Int, bits: Int, tag: Int = 1, extensible: Bool = false, align: Int? = nil) -> [UInt8] {
        var fmt: [UInt8] = []
        append(&fmt, UInt32(extensible ? 0xFFFE : tag), 2)
        append(&fmt, UInt32(channels), 2)
        append(&fmt, UInt32(rate), 4)
        append(&fmt, UInt32(rate * channels * bits / 8), 4)
        append(&fmt, UInt32(align ?? channels * bits / 8), 2)
        append(&fmt, UInt32(bits), 2)
        if extensible {
            append(&fmt, 22, 2)
            append(&fmt, UInt32(bits), 2)
            append(&fmt, 0, 4)
            append(&fmt, UInt32(tag), 2)
            fmt += [0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71]
        }
        var body = Array("WAVE".utf8) + chunk("fmt ", fmt)
        body += chunk("LIST", Array("INFOISFT\u{4}\0\0\0test".utf8))
        body += chunk("data", data)
        var file = Array("RIFF".utf8)
        append(&file, UInt32(body.count), 4)
        return file + body
    }

    public static func chunk(_ id: String, _ body: [UInt8]) -> [UInt8] {
        var bytes = Array(id.utf8)
        append(&bytes, UInt32(body.count), 4)
        bytes += body
        if body.count % 2 == 1 { bytes.append(0) }
        return bytes
    }

    public static func append(_ bytes: inout [UInt8], _ value: UInt32, _ count: Int) {
        for index in 0..<count { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * index))) }
    }

    /// A 440 Hz tone at half scale.
    public static func tone(_ frame: Int, rate: Int) -> Double { 0.5 * sin(2 * Double.pi * 440 * Double(frame) / Double(rate)) }

    /// White noise of `amplitude` (0…1), the same every run (a xorshift generator).
    public static func noise(rate: Int, frames: Int, amplitude: Double) -> [UInt8] {
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        return file(rate: rate, channels: 1, bits: 16, frames: frames) { _, _ in
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return amplitude * (Double(state % 2_000_001) / 1_000_000 - 1)
        }
    }
}
