import Foundation

/// The few fields of an ELF header the loader checks before `dlopen`, so that a wrong file
/// gets a precise message instead of dlopen's terse one.
struct ELFHeader: Equatable {
    /// `ELFCLASS32` (1) or `ELFCLASS64` (2).
    var elfClass: UInt8
    /// `ELFDATA2LSB` (1) or `ELFDATA2MSB` (2).
    var dataEncoding: UInt8
    /// `e_type`: 3 is a shared object.
    var objectType: UInt16
    /// `e_machine`.
    var machine: UInt16

    /// Reads the header; nil if `bytes` do not start like an ELF file.
    init?(_ bytes: [UInt8]) {
        guard bytes.count >= 20, bytes[0] == 0x7F, bytes[1] == 0x45, bytes[2] == 0x4C, bytes[3] == 0x46 else { return nil }
        elfClass = bytes[4]
        dataEncoding = bytes[5]
        let little = dataEncoding != 2
        func u16(_ i: Int) -> UInt16 {
            little ? UInt16(bytes[i]) | UInt16(bytes[i + 1]) << 8 : UInt16(bytes[i]) << 8 | UInt16(bytes[i + 1])
        }
        objectType = u16(16)
        machine = u16(18)
    }

    static let hostMachine: UInt16 = {
        #if arch(x86_64)
        return 62
        #elseif arch(arm64)
        return 183
        #elseif arch(arm)
        return 40
        #elseif arch(i386)
        return 3
        #else
        return 0
        #endif
    }()

    static func machineName(_ machine: UInt16) -> String {
        switch machine {
        case 3: "i386"
        case 8: "mips"
        case 20: "powerpc"
        case 21: "powerpc64"
        case 40: "arm"
        case 62: "x86_64"
        case 183: "aarch64"
        case 243: "riscv"
        default: "machine \(machine)"
        }
    }
}
