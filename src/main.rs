fn main() {
    eprintln!("threadkeeper: not yet wired");
    std::process::exit(2);
}
