from workgym.cli import main

main()
