from diskq.cli import main

main()
